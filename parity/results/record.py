"""The results record: the one place a key is added (tests/test_record_keys.py fails on any other).

`Record` declares every key the engine writes, with its type and meaning; in memory its status is a `Status`
and its owner an `Owner`, and JSON exists only in parity.results.files, which reads and writes one object per
line. `empty_record` writes the required keys, so readers index them without guessing; the rest are present
only where they apply.
"""

from __future__ import annotations

import re
from typing import Any, Literal, TypedDict

from parity.results.kinds import Status
from parity.results.owner import Owner

SCHEMA = 1


STATUSES = tuple(s.value for s in Status)
MODES = ("run", "compile", "interpret")


class Timing(TypedDict, total=False):
    """Seconds per phase of one case (None where the phase did not run)."""

    inputs_s: float | None  # building the case's inputs
    ref_s: float | None  # the fp64 reference (0 on a reference-cache hit)
    run_s: float | None  # the launch, compiles included
    compile_s: float | None  # compiles alone, as Triton's hooks timed them
    compare_s: float | None  # comparing outputs with the reference
    store_s: float | None  # saving outputs for cross-backend comparison
    warm_s: float | None  # the warm pass's autotune search before the accuracy pass
    perf_s: float | None  # the perf pass's timing of this case
    kernel_timing_s: float | None  # of perf_s: timing the kernel (its autotuning included)
    baseline_timing_s: float | None  # of perf_s: timing the baseline
    peer_timing_s: float | None  # of perf_s: timing the peer (its library's autotuning included)
    repro_s: float | None  # shrinking and writing the repro
    proof_s: float | None  # running a fit's configs against fp64 (parity.run.fit_proof; 0 where a proof was reused)
    case_wall_s: float | None  # the worker's wall time since its previous record
    wait_s: float | None  # the worker's time before this case's item started


class KnownDivergence(TypedDict):
    """A divergence the spec declares for this backend (also on the compile tiers)."""

    reason: str
    link: str
    expected_by: str | None  # the kernel's own author documents it (not the compiler): no draft


class Where(TypedDict, total=False):
    """Where in the output a wrong result sits (parity.repro.where.locate)."""

    error: str  # why it could not be located (the other keys are then absent)
    region: str | None  # the comparison's region of the worst element (parity.run.compare)
    grid: list[int]  # the launch's grid
    program: dict[str, Any]  # the worst element's program: its ids, last_program
    likely_missing_mask: list[str]  # "file:line: text" of each unmasked tl.load, for a tail failure


class ProvenConfig(TypedDict):
    """One fitting config run on a tier that computes, against fp64 (parity.run.fit_proof_run)."""

    config: dict[str, Any]  # the constexprs replaced (compile options are left as launched)
    was: dict[str, Any]  # what the launcher passed for them
    computes: bool | None  # the fp64 answer within tolerance; False: wrong; None: not run (detail says why)
    status: str  # the run's record status
    detail: str
    grid_scaled: dict[str, int]  # grid axis -> factor, where the launcher's fixed grid was scaled


class Proof(TypedDict):
    """Whether a fit's configs compute the right answer (parity.fit.proof): only then are they a fix."""

    tier: str | None  # the tier that ran them (ascend-lowered, interpret)
    case: str  # the case id they ran at
    configs: list[ProvenConfig]
    kernel_change: str | None  # the change a config that computes wrong asks of the kernel
    why_not: str | None  # why nothing was run


class Fit(TypedDict, total=False):
    """The configs that fit the target where a compile overflowed (built by parity.fit)."""

    searched: int
    fitting: list[dict[str, Any]]  # {"config": {...}, "used": int, "of": int}
    arch: str
    unit: Literal["bits", "bytes"]
    smallest_need: int | None
    cap: str | None
    search_s: float
    proof: Proof  # the fitting configs run against fp64 (parity.run.fit_proof), before any report calls one a fix


class TriageEvidence(TypedDict, total=False):
    """What triage read beyond the record when it decided the owner (parity.driver.evidence)."""

    release: str | None  # this process's compiler release, as env.json records it
    dirs: list[str]  # the results dirs beside the run's own that were read (reports/<tier>/, <tier>@<release>/)
    tiers: dict[str, str]  # tier -> the status of its record of the same case, on the same inputs
    releases: dict[str, str]  # another release of the same compiler -> this tier's status of the case there


class Record(TypedDict, total=False):
    """One case (one compile, on a compile tier) on one backend: every key the engine writes."""

    # required: empty_record writes each of these
    schema: int  # 1 (SCHEMA); a reader refuses a file of another schema
    backend: str  # the tier's name ("interpret", "cuda-compile", ...)
    mode: str  # run | compile | interpret (MODES)
    kernel: str  # the spec's name
    case: str  # stable case id, e.g. "T=1000,H=4,dtype=bf16" (";kernel=..." per compile on a compile tier)
    params: dict[str, Any]  # the case's parameters
    status: Status  # passed failed error crashed skipped xfailed xpassed interrupted (STATUSES)
    reason: str | None  # why it is not a plain pass, its key line first
    metrics: dict[str, Any] | None  # the worst output's max_abs_err, err_ratio, mismatch_frac, ...; per_output
    tolerance: dict[str, Any] | None  # the tolerance the case was judged with
    compiles: int | None  # compilations the launch triggered
    compile: dict[str, Any] | None  # a compile tier's one compile (parity.compile.tools.COMPILE_KEYS)
    perf: dict[str, Any] | None  # the perf pass's figures and targets
    timing: Timing  # seconds per phase
    repro: str | None  # the repro dir, relative to the results dir
    # optional: present where they apply
    suite: str | None  # "accuracy", "compile", "specialization", "perf"
    worker: str  # the xdist worker that wrote it ("main" without xdist)
    device: str  # which of a multi-device host's devices ran it (run tiers)
    scope: str | None  # what a pass here does and does not show (Backend.scope)
    input_digest: str  # sha256 of the inputs: proves two backends were fed the same bytes
    inputs_made_on: str  # where the perf pass built the inputs (the device, or the CPU)
    launcher_allocs_filled: int | None  # launcher allocations NaN-filled during the launch (run tiers)
    autotune_pinned: dict[str, Any] | None  # each autotuned kernel's pinned config
    autotune_skipped: list[Any]  # autotuned kernels that could not be pinned, and why
    compiled_kernels: list[dict[str, Any]]  # each kernel the launch compiled: name, id, defining file, compiles
    second_reference: dict[str, Any]  # a library's own reference against parity's fp64 one
    error_kind: str  # "launch_option" (refused before compiling), "reference" or "inputs" (spec code raised), "bundle"
    expected_compile_error: str | None  # the pattern of the spec's expected compile error here
    diagnosis: dict[str, str]  # a classic kernel mistake behind the error (parity.run.mistakes)
    known_divergence: KnownDivergence  # the spec's known divergence that made it xfailed/xpassed
    declined: dict[str, str]  # the library's own guard refused this environment: library, reason, link
    fit: Fit  # the configs that fit, after an overflow
    ascend_perf: dict[str, Any]  # static Ascend perf advice: arch, findings, not_checked, ub_claim (and its fp64 proof)
    specialization: dict[str, Any]  # the specialization suite's sweep of one dynamic argument
    perf_warm: dict[str, Any]  # what the warm pass compiled for the perf pass, and its seconds
    carried_over: bool  # kept from the previous run of this results dir (kernels not re-run)
    shrink: dict[str, Any]  # how the case was shrunk before the repro was written
    rounding: dict[str, Any]  # the accumulation error model at the mismatches (parity.run.rounding): within, judged
    where: Where  # where in the output the failure sits (program, grid, missing mask)
    library: dict[str, Any]  # the library that ships the kernel: name, version, repo
    finding_of: dict[str, Any]  # the library's own finding: name, why
    owner: Owner  # who must act (parity.triage)
    repro_error: str  # why no repro was written (a raise in shrink, repro, drafting or triage)
    repro_note: str  # what the repro dir lacks and why
    repro_of: dict[str, Any]  # an earlier case's repro, same kernel and limit: case, limit (parity.repro.by_limit)
    crash: dict[str, Any]  # a dead worker's case: returncode (negative: the signal), worker, what it wrote before
    crash_stacks: str  # that worker's faulthandler thread stacks, a file relative to the results dir (not the terminal)
    timeout: dict[str, Any]  # a case the controller killed past its bound (parity.run.watchdog): bound_s, ran_s
    sanitizer: dict[str, Any]  # --sanitize: compute-sanitizer memcheck's error count, first errors, exit, command
    oob: dict[str, Any]  # out-of-bounds: red-zone writes (parity.run.redzone) or memcheck errors; unmasked lines
    replay: dict[str, Any]  # --replay: the bundle, the tier that recorded it, where the kernel came from
    tf32_dots: dict[str, Any]  # cuda-compile: fp32 tl.dot compiled as TF32 (TTIR inputPrecision = tf32): counts, line
    random_stream: dict[str, Any]  # a random kernel's failed outputs judged as distributions (parity.run.distribution)
    source_facts: dict[str, list[str]]  # a failing case's kernel source as triage read it: spin_lock, random lines
    npu_unseen: list[dict[str, str]]  # known NPU bugs (parity.known_npu) a passed kernel could meet, unseen here
    triage_evidence: TriageEvidence  # the sibling results triage read to decide the owner (parity.driver.evidence)


# every record carries these (empty_record writes them all), so readers index them without guessing
REQUIRED_KEYS = ("schema", "backend", "mode", "kernel", "case", "params", "status", "reason", "metrics",
                 "tolerance", "compiles", "compile", "perf", "repro")


def empty_record(backend: str, mode: str, kernel: str, case: str, params: dict[str, Any]) -> Record:
    """A record with every required key present, so readers never guess (the stages add the keys `Record`
    declares as they judge the case)."""
    return {
        "schema": SCHEMA, "backend": backend, "mode": mode, "kernel": kernel, "case": case,
        "params": params, "status": Status.ERROR, "reason": None, "metrics": None, "tolerance": None,
        "compiles": None, "compile": None, "perf": None,
        "timing": {"compile_s": None, "ref_s": None, "run_s": None, "compare_s": None},
        "repro": None,
    }


def record_problem(record: Any) -> str | None:
    """Why a parsed results line is not a usable record, or None when it is."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not a record object"
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        return f"missing key(s) {', '.join(missing)}"
    if not isinstance(record["kernel"], str) or not isinstance(record["case"], str):
        return "kernel and case must be strings"
    if record["status"] not in STATUSES:
        return f"unknown status {record['status']!r} (valid: {', '.join(STATUSES)})"
    return None


def key_lines() -> list[str]:
    """Markdown lines, one per Record key: name, type and the meaning its declaration gives (docs/reference.md)."""
    import inspect

    found = re.findall(r"^    (\w+): (.+?)  # (.+)$", inspect.getsource(Record), re.MULTILINE)
    return [f"- `{name}` ({kind}): {meaning}" for name, kind, meaning in found]
