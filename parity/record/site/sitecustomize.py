"""Loaded by every Python process `parity record` starts (parity/record/site is on its PYTHONPATH).

It arms the recorder, then runs the sitecustomize this one shadows, if the environment has one."""

import os
import sys

try:
    from parity.record.hook import arm

    arm()
except Exception as exc:  # never stop the user's command
    print(f"parity record: capture not armed: {type(exc).__name__}: {exc}", file=sys.stderr)


def _chain() -> None:
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.abspath(entry or ".") != here and os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_shadowed_sitecustomize", candidate)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module(importlib.util.module_from_spec(spec))
            return


_chain()
