"""Specs over real kernel libraries' public ops, unchanged: one module per library.

Run one with `--kernels libraries.fla` (or libraries.liger, libraries.flag_gems). A library that is
not installed makes its specs skip with the `pip install` command; one that fails to import makes
its cases fail with the library's own error, as that library's finding.
"""
