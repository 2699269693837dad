"""The generated repro scripts' bodies, as real Python files that ruff lints and tests import."""
