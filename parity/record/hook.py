"""Installing the recorder in a process `parity record` started: as soon as triton has been imported.

`parity record` puts parity/record/site on PYTHONPATH; its sitecustomize calls `arm()` in every Python
process of the command (children too: they inherit the environment). Importing triton early in each of
them (a pip, a git hook) would cost seconds and might fail, so `arm` waits: a finder on sys.meta_path
notices the first `import triton` and installs the recorder once triton's package has loaded.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Final

from parity import settings
from parity.seams.core import present

TRITON: Final = "triton"  # the package whose first import installs the recorder
_installed: Any = None


def install_now() -> Any:
    """The process's recorder, installed on first call (from the environment `parity record` set)."""
    global _installed
    if _installed is None:
        import importlib.util

        if importlib.util.find_spec("safetensors") is None:
            raise RuntimeError(f"{sys.executable} has no safetensors, which bundles store tensors in; "
                               f"`{sys.executable} -m pip install safetensors`, then record again")
        from parity.record.capture import WorkloadRecorder

        given = settings.current()  # PARITY_RECORD_DIR, _KEEP, _BUDGET, which `parity record` set
        recorder = WorkloadRecorder(Path(str(given.record_dir)), keep=given.record_keep,
                                    budget_bytes=given.record_budget)
        recorder.install()
        _installed = recorder
    return _installed


class _AfterTriton(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on the first `import triton` it wraps that spec's loader to install afterwards."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != TRITON:
            return None
        sys.meta_path.remove(self)  # once, and so find_spec below does not come back here
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        load = loader.exec_module

        def exec_module(module: Any) -> None:
            load(module)
            _install_reporting()

        present(loader, "exec_module", exec_module)  # this one loader's, for this one import (never undone)
        return spec


def _install_reporting() -> None:
    try:
        install_now()
    except Exception as exc:  # the workload must run even where the recorder cannot
        print(f"parity record: capture not installed in process {os.getpid()}: {type(exc).__name__}: {exc}",
              file=sys.stderr)


def arm() -> None:
    if settings.current().record_dir is None:
        return
    if TRITON in sys.modules:
        _install_reporting()
    else:
        sys.meta_path.insert(0, _AfterTriton())
