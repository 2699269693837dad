"""The compile tiers' repro for a library launcher that raised before compiling anything (parity.repro.prelaunch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from parity.repro import prelaunch
from parity.repro.outputs_store import case_filename
from parity.repro.run_repro import REPROS_DIR, session_env
from parity.repro.source import SourceError
from parity.spec import Case, KernelSpec


def attach_compile_tier(record: dict[str, Any], spec: KernelSpec, case: Case, backend: Any,
                        cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int) -> None:
    """A launcher that raised outside any compile on a compile tier: the library's ISSUE.md and repro.py.

    The case ran in a forked child (parity.run.fork), whose exception comes back as text; the case is run
    once more here, in-process, to get the exception with its frames (it raised before compiling, so no
    library kernel cache is left behind)."""
    try:
        backend.compile_case(replace(spec, fork=False), case, cpu_inputs)
    except Exception as exc:  # the raise this record is about
        raised: BaseException | None = exc
    else:
        raised = None
    owned = prelaunch.owning_library(spec, raised) if raised is not None else None
    if owned is None or raised is None:
        record["repro_error"] = "the launcher raised outside the library's code, or not again in-process"
        return
    try:
        out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
        prelaunch.write(out_dir, spec, case, raised, *owned, record, session_env(backend), backend.name, seed)
    except (OSError, SourceError, ValueError, TypeError) as err:  # a repro must never stop the tier
        record["repro_error"] = f"{type(err).__name__}: {err}"[:600]
        return
    record["repro"] = out_dir.relative_to(results_dir).as_posix()
