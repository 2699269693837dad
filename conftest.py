"""Loads the parity pytest plugin for every suite and self-test in this repo."""

pytest_plugins = ["parity.plugin"]
