"""The compile tiers' repro for a library launcher that raised before compiling anything (parity.repro.prelaunch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from parity.repro import prelaunch
from parity.repro.run_repro import REPROS_DIR, session_env
from parity.repro.source import SourceError
from parity.results import Record
from parity.results.outputs_store import case_filename
from parity.spec import Case, KernelSpec


def attach_compile_tier(record: Record, spec: KernelSpec, case: Case, backend: Any,
                        cpu_inputs: Mapping[str, Any], results_dir: Path, seed: int, exc: BaseException) -> None:
    """A launcher that raised outside any compile on a compile tier: the library's ISSUE.md and repro.py.

    In-process, `exc` carries the frames the draft needs. From a forked child (parity.compile.fork) it comes
    back as text, so a child that raised is run once more here, in-process (it raised before compiling,
    so no library kernel cache is left behind); a child that crashed or hung is not: it would take the
    tier's worker down with it."""
    from parity.compile.fork import ForkedCaseError

    raised: BaseException | None = exc
    if isinstance(exc, ForkedCaseError):
        if getattr(exc, "child_traceback", None) is None:
            record["repro_error"] = "the case crashed or hung in its forked child: not re-run in-process"
            return
        try:
            backend.compile_case(replace(spec, fork=False), case, cpu_inputs)
        except Exception as again:  # the raise this record is about, now with its frames
            raised = again
        else:
            raised = None
    if raised is None:
        record["repro_error"] = "the launcher did not raise again in-process"
        return
    record.update(_draft(record, spec, case, raised, backend, results_dir, seed))  # type: ignore[typeddict-item]
    from parity.repro import verify

    verify.finalize(record, results_dir)  # kept only where repro.py fails standalone as the record did


def in_child(record: Record, spec: KernelSpec, case: Case, backend: Any, results_dir: Path,
             seed: int) -> Callable[[BaseException], dict[str, Any]]:
    """For a compile tier that records a launcher's raise instead of raising (ascend-compile): what the
    describing re-run's child (parity.repro.compile_repro) calls with that raise, its frames intact, when
    nothing compiled. It writes the library's ISSUE.md and repro.py and answers the record's new fields."""
    def answer(exc: BaseException) -> dict[str, Any]:
        # the child's copy (what prelaunch.write marks on it comes back in the answer), without its compile
        # dict: nothing compiled, so that names a guess (the spec's first kernel); the draft names the op
        mine = record.copy()
        mine.pop("compile", None)
        drafted = _draft(mine, spec, case, exc, backend, results_dir, seed)
        if "repro" not in drafted:
            return drafted
        return {**{k: mine[k] for k in ("finding_of", "repro_note") if k in mine}, **drafted}
    return answer


def _draft(record: Record, spec: KernelSpec, case: Case, exc: BaseException, backend: Any,
           results_dir: Path, seed: int) -> dict[str, Any]:
    """The library's ISSUE.md and repro.py for a raise before any compile: {"repro": its dir} or
    {"repro_error": why not}."""
    owned = prelaunch.owning_library(spec, exc)
    if owned is None:
        return {"repro_error": "the launcher raised outside the library's code before compiling anything"}
    out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
    try:
        prelaunch.write(out_dir, spec, case, exc, *owned, record, session_env(backend), backend.name, seed)
    except (OSError, SourceError, ValueError, TypeError) as err:  # a repro must never stop the tier
        return {"repro_error": f"{type(err).__name__}: {err}"[:600]}
    return {"repro": out_dir.relative_to(results_dir).as_posix()}
