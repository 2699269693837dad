"""Repros for the specialization sweep's failures, through the path the other suites take.

A sweep that raised stopped at one case (`SweepResult.error_case`). That case runs once more the way
its tier's own suite runs it: the driver hands in `rerun`, its pipeline's phases for one case without the
writes (parity.driver.pipeline.rerun), which write the folder, verify it in a fresh process
(parity.repro.verify) and name it in their record; the sweep record names the same folder (and, in its
`specialization` block, `repro_from`: the re-run's record the folder was verified against), or says why
there is none. A storm, a variant count or an IR finding is a
count over many launches, not one launch that fails, so it gets no script: its `repro_error` says so
and names the command that re-runs the sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from parity.repro.prelaunch import spec_module
from parity.results import Record, Status
from parity.spec import Case, KernelSpec

FAILING = (Status.FAILED, Status.ERROR, Status.XFAILED)
REPRODUCED = (Status.FAILED, Status.ERROR)  # a sweep record that may name a folder


def sweep_command(spec: KernelSpec, backend: str, module: str) -> str:
    return f"pytest 'suites/test_specialization.py::test_specialization[{spec.name}]' --backend={backend} " \
           f"--kernels={module}"


def no_script_reason(record: Mapping[str, Any], command: str) -> str:
    """Why a sweep finding that raised nowhere has no repro.py, and how to see it again."""
    sweep = record.get("specialization") or {}
    return (f"no standalone repro: the finding ({sweep.get('verdict')}) is a count over the "
            f"{sweep.get('arg')} sweep's {sweep.get('distinct_values')} values, not one launch that fails; "
            f"the record's `specialization` block holds the counts. Re-run the sweep: {command}")


def pick(records: Sequence[Record], case: Case) -> dict[str, Any]:
    """What the sweep record takes from the re-run: the first kept folder, else the first why-not."""
    failing = [r for r in records if r.get("status") in FAILING]
    kept = next((r for r in failing if r.get("repro")), None)
    if kept is not None:  # what the folder reproduces: the re-run's record, kept in the sweep's own block
        written_for = {k: kept.get(k) for k in ("kernel", "case", "suite", "status", "reason", "compile")}
        found: dict[str, Any] = {"repro": kept["repro"], "repro_from": written_for}
        if kept.get("owner"):  # the same failure: triage's owner of it, whose tracker the folder's draft names
            found["owner"] = kept["owner"]
        return found
    if not failing:
        return {"repro_error": f"no repro: {case.id} alone, outside the sweep, did not fail "
                               f"({', '.join(sorted({str(r.get('status')) for r in records})) or 'no records'})"}
    why = failing[0].get("repro_error") or failing[0].get("repro_note") or "its suite kept no folder"
    return {"repro_error": f"{case.id} re-run as its suite runs it: {why}"[:1000]}


def attach(record: Record, spec: KernelSpec, error_case: Case | None, backend: str, *,
           rerun: Callable[[Case], Sequence[Record]], reruns: dict[str, dict[str, Any]] | None = None) -> None:
    """Name a repro folder for a failed or errored sweep record, or say why there is none. Never raises:
    the record keeps its verdict, with `repro_error`. `rerun` gives the case's records as its tier's suite
    makes them; `reruns` (case id -> what it gave) spares the re-run to the other kernels of one sweep that
    stopped at the same case."""
    if record.get("status") not in REPRODUCED:
        return
    if error_case is None:
        record["repro_error"] = no_script_reason(record, sweep_command(spec, backend, spec_module(spec)))
        return
    reruns = {} if reruns is None else reruns
    try:
        if error_case.id not in reruns:
            reruns[error_case.id] = pick(rerun(error_case), error_case)
        found = dict(reruns[error_case.id])
        if "repro_from" in found:
            record.setdefault("specialization", {})["repro_from"] = found.pop("repro_from")
        record.update(cast(Record, found))  # repro, owner or repro_error: keys Record declares
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # a repro must never cost the sweep its record
        record["repro_error"] = f"re-running {error_case.id} for its repro raised {type(exc).__name__}: {exc}"[:600]
