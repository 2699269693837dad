"""Repros: shrink a failing case, extract its source, and write a standalone script and ISSUE.md."""
