"""Ascend: the NPU run backend, the compile-only driver, the arch table and diagnostics."""

# what building venv-ascend asks of the python that runs nox (`parity check` says it where that venv is missing)
VENV_NOTE = "triton-ascend has wheels for CPython 3.10 and 3.11 only: `python3.11 -m nox ...`"
