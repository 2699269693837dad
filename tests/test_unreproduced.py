"""A crash or hang that the red-zone tier does not reproduce is settled (parity.triage.unreproduced): a spin lock
on ascend-lowered is that tier's limit, another crash the tier's vendor; a crash the red zones reproduce stays the
author's, and without the red-zone tier's record nothing changes."""

from parity.triage.decide import decide
from parity.triage.merged import retriage
from parity.triage.stage import CaseCode, triage

SPIN = """
@triton.jit
def layer_norm_bwd_dx(DX, Lock, Count, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    lock = Lock + row % 4
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    tl.atomic_xchg(lock, 0)
"""
PLAIN = """
@triton.jit
def scale(X, Y, N, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + o, tl.load(X + o, mask=o < N) * 2, mask=o < N)
"""


def killed(tier: str = "ascend-lowered") -> dict:
    return {"backend": tier, "mode": "run", "suite": "accuracy", "kernel": "ln_bwd", "case": "M=64,N=128",
            "params": {"M": 64, "N": 128, "dtype": "fp32"}, "status": "crashed", "compile": None, "metrics": None,
            "reason": "the worker died while running the case (signal 9, SIGKILL)", "crash": {"returncode": -9}}


def hung() -> dict:
    return {**killed(), "status": "error", "crash": None, "reason": "timeout: Timeout (>600.0s) from pytest-timeout."}


INTERPRET_PASS = {"backend": "interpret", "status": "passed", "metrics": {"max_abs_err": 0.0}}


def test_a_spin_lock_killed_on_ascend_lowered_that_the_interpreter_passes_is_the_tiers_limit():
    for record in (killed(), hung()):
        owner = decide(record, {"interpret": INTERPRET_PASS}, SPIN)
        assert (owner.who, owner.limit, owner.provisional) == ("tier", "lowered-spin-lock", False), owner
        assert "spin lock needs concurrent programs" in owner.evidence
        assert "interpret computed the same case right" in owner.evidence, owner.evidence
        assert "atomic_cas" in owner.evidence


def test_the_hang_becomes_an_expected_tier_limit_through_the_triage_stage():
    class Facts:
        def version(self, record): return None
        def others(self, record): return {"interpret": INTERPRET_PASS}
        def versions(self, record): return {}

    record = hung()
    owner = triage(record, Facts(), CaseCode(source=lambda: SPIN))
    assert owner is not None and owner.limit == "lowered-spin-lock"
    assert record["status"] == "xfailed" and record["reason"].startswith("tier limit: spin lock needs")
    assert record["source_facts"]["spin_lock"] == ["while tl.atomic_cas(lock, 0, 1) == 1"]


def test_the_reports_retriage_settles_it_from_the_facts_the_run_kept():
    """At run time the interpreter's dir was not there yet (provisional author); the report has it, and no source."""
    record = {**killed(), "source_facts": {"spin_lock": ["while tl.atomic_cas(lock, 0, 1) == 1"]},
              "owner": decide(killed(), {}, SPIN)}
    assert record["owner"].who == "author" and record["owner"].provisional
    interp = {**killed("interpret"), **INTERPRET_PASS}
    assert retriage([record, interp]) == 1
    assert (record["owner"].who, record["owner"].limit) == ("tier", "lowered-spin-lock"), record["owner"]


def test_a_crash_the_red_zones_do_not_reproduce_without_a_spin_is_the_tiers_vendor():
    owner = decide(killed(), {"interpret": INTERPRET_PASS}, PLAIN)
    assert (owner.who, owner.provisional, owner.limit) == ("triton-ascend", False, None), owner
    assert "not the kernel's" in owner.evidence


def test_controls_an_out_of_bounds_crash_stays_the_authors_and_no_evidence_changes_nothing():
    # the red zones reproduce the fault: the author's, now settled
    found = {"backend": "interpret", "status": "failed", "metrics": {"max_abs_err": 0.0},
             "oob": {"writes": [{"unmasked_stores": ["k.py:4: tl.store(Y + o, x)"]}]}}
    for source in (SPIN, PLAIN):
        owner = decide(killed(), {"interpret": found}, source)
        assert (owner.who, owner.provisional) == ("author", False), owner
        assert "red zones of interpret found" in owner.evidence
    # no red-zone tier ran it (cuda-compile's pass says nothing about memory): provisional, as before
    owner = decide(killed(), {"cuda-compile": {"backend": "cuda-compile", "status": "passed"}}, SPIN)
    assert (owner.who, owner.provisional) == ("author", True), owner
    # a spin lock on a tier that declares no such limit (a GPU): no vendor on the strength of a spin
    owner = decide(killed("cuda"), {"interpret": INTERPRET_PASS}, SPIN)
    assert owner.who == "author" and owner.provisional, owner
    # a wrong value is no crash: the rule leaves it alone
    wrong = {**killed(), "status": "failed", "crash": None, "metrics": {"max_abs_err": 1.0, "err_ratio": 0.5}}
    assert decide(wrong, {"interpret": INTERPRET_PASS}, SPIN).limit != "lowered-spin-lock"


DIVIDE = """
@triton.jit
def remainder_kernel(X, Y, Out, N, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Out + o, tl.load(X + o, mask=o < N) % tl.load(Y + o, mask=o < N), mask=o < N)
"""


def test_sigfpe_on_ascend_lowered_is_the_x86_trap_not_the_kernel_and_not_a_vendor():
    """An integer remainder by zero in the data (FlagGems' remainder test) kills the lowered tier's process with
    SIGFPE; the NPU and GPUs return a value. Not the author's stray access, and not triton-ascend's crash even when
    the interpreter passed the same case; a SIGKILL of the same kernel keeps the usual rules (its control)."""
    fpe = {**killed(), "kernel": "remainder", "crash": {"returncode": -8},
           "reason": "the process running this case died (signal 8, SIGFPE) before the case finished"}
    for others in ({}, {"interpret": INTERPRET_PASS}):
        owner = decide(fpe, others, DIVIDE)
        assert (owner.who, owner.limit, owner.provisional) == ("tier", "lowered-int-div-trap", False), owner
        assert "traps on x86" in owner.evidence
    sigkill = decide({**killed(), "kernel": "remainder"}, {}, DIVIDE)
    assert sigkill.limit is None and sigkill.who == "author" and sigkill.provisional
    on_the_interpreter = decide({**fpe, "backend": "interpret"}, {}, DIVIDE)
    assert on_the_interpreter.limit != "lowered-int-div-trap"  # a limit of the lowered tier only


def test_a_sigfpe_crash_reason_names_the_division_and_a_sigsegv_the_usual_stray_access():
    from parity.run.faults import crash_reason

    assert "integer division or remainder by zero" in crash_reason(-8) and "out-of-bounds" not in crash_reason(-8)
    assert "out-of-bounds access" in crash_reason(-11)  # control: SIGSEGV keeps the usual cause
