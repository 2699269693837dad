"""Ascend: the NPU run backend, the compile-only driver, the arch table and diagnostics."""
