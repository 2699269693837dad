"""The owner rules as data (parity.triage.rules): each rule answers its own case and declines another, the table
runs them in the order its docstring states, and every rule the module defines is in the table."""

from __future__ import annotations

import inspect
import re
import types

import pytest

import parity.triage.rules as rules
from parity.triage.case import CaseEvidence
from parity.triage.decide import first_answer

SPIN_FREE = "o = tl.arange(0, 8)\ntl.store(y + o, tl.load(x + o))"


def rec(tier: str = "ascend-lowered", status: str = "failed", **extra) -> dict:
    """A failing record: wrong values (metrics, no compile) unless `extra` says otherwise."""
    return {"backend": tier, "mode": "run", "kernel": "k", "case": "N=8", "status": status, "params": {"N": 8},
            "reason": "output 'y': 1% off", "compile": None, "metrics": {"max_abs_err": 1.0, "worst_index": [3]},
            **extra}


def errored(tier: str, reason: str, **extra) -> dict:
    return rec(tier, "error", reason=reason, metrics=None, **extra)


def compile_failed(tier: str, message: str, kind: str) -> dict:
    return rec(tier, reason=message, metrics=None, compile={"ok": False, "error_kind": kind, "message": message})


def replayed(recorded_on: str, out: str, **metrics) -> dict:
    return rec(params={"launch": 0, "out": out}, metrics={"max_abs_err": 1e-3, "nan_count": 0, **metrics},
               replay={"bundle": "b", "recorded_on": recorded_on, "verified": True})


def killed(tier: str = "ascend-lowered") -> dict:
    return rec(tier, "crashed", reason="the worker died while running the case (signal 9, SIGKILL)", metrics=None,
               crash={"returncode": -9})


PASSED = {"backend": "interpret", "status": "passed", "metrics": {"max_abs_err": 0.0}}
ASCEND_LINK = "https://github.com/Ascend/triton-ascend/issues/1"
KNOWN = {"reason": "a lowering bug", "link": ASCEND_LINK, "expected_by": None}

# rule -> ((record, others, source) it answers, with the owner kind and a word of its evidence),
#         (record, others, source) it declines
CASES = {
    "known_divergence": ((rec(status="xfailed", known_divergence=KNOWN), {}, ""), ("triton-ascend", ASCEND_LINK),
                         (rec(known_divergence=KNOWN), {}, "")),
    "within_rounding": ((rec(rounding={"within": True, "sentence": "a 4,096-term sum"}), {}, ""),
                        ("tolerance", "4,096-term"), (rec(rounding={"within": False}), {}, "")),
    "recorded_reference": ((replayed("interpret", "bf16"), {}, ""), ("tier", "recorded under"),
                           (replayed("ascend-lowered", "bf16"), {}, "")),
    "kernel_mistake": ((rec(diagnosis={"what": "a tile indexed like an array"}), {}, ""), ("author", "indexed like"),
                       (rec(diagnosis={}), {}, "")),
    "out_of_bounds_store": ((rec(oob={"unmasked": ["k.py:2: tl.store(y + o, v)"]}), {}, ""),
                            ("author", "red zones"), (rec(oob={"unmasked": []}), {}, "")),
    "later_launch_option": (
        (errored("ascend-lowered", "Keyword argument enable_ubuf_saving was specified but unrecognised"), {}, ""),
        ("environment", "enable_ubuf_saving"),
        (errored("cuda-compile", "Keyword argument enable_ubuf_saving was specified but unrecognised"), {}, "")),
    "missing_ascend_module": (
        (errored("ascend-lowered", "AttributeError: 'NoneType' object has no attribute 'x'",
                 library={"name": "Lib", "missing": ["triton.language.extra.cann"]}), {}, ""),
        ("environment", "triton.language.extra.cann"),
        (errored("ascend-lowered", "AttributeError: 'NoneType' object has no attribute 'x'",
                 library={"name": "Lib", "missing": []}), {}, "")),
    "device_memory": ((errored("cuda", "torch.OutOfMemoryError: CUDA out of memory"), {}, ""),
                      ("environment", "out of memory"),
                      (compile_failed("cuda-compile", "CUDA out of memory", "mlir_error"), {}, "")),
    "random_stream_differs": ((rec(random_stream={"agrees": True, "outputs": {}}), {}, "u = tl.rand(seed, o)"),
                              ("random", "tl.rand"),
                              (rec(random_stream={"agrees": False, "outputs": {}}), {}, "u = tl.rand(seed, o)")),
    "summation_order": ((replayed("interpret", "fp32", err_ratio=7e-5), {}, "s = tl.sum(x, 0)"),
                        ("tolerance", "summation orders"),
                        (replayed("interpret", "fp32", err_ratio=1e-2), {}, "s = tl.sum(x, 0)")),
    "known_limit": ((errored("interpret", "arange's range must be a power of 2"), {}, ""),
                    ("author", "power-of-2"), (errored("interpret", "some other error"), {}, "")),
    "ascend_only_construct": (
        (errored("cuda-compile", "Keyword argument multibuffer was specified but unrecognised"), {}, ""),
        ("author", "only triton-ascend accepts"),
        (errored("ascend-compile", "Keyword argument multibuffer was specified but unrecognised"), {}, "")),
    "config_overflow": ((compile_failed("ascend-compile", "ub overflow, requires 300000 bits", "ub_overflow"), {}, ""),
                        ("author", "cannot hold"), (compile_failed("ascend-compile", "a lowering error", "mlir_error"),
                                                    {}, "")),
    "fails_the_same_way": ((rec("interpret"), {"ascend-lowered": rec("ascend-lowered")}, ""),
                           ("author", "fail the same way"), (rec("interpret"), {}, "")),
    "missing_environment": ((errored("cuda", "ModuleNotFoundError: No module named 'numpy'"), {}, ""),
                            ("environment", "numpy"),
                            (errored("cuda", "ModuleNotFoundError: No module named 'triton.nope'"), {}, "")),
    "red_zone_settles": ((killed(), {"interpret": PASSED}, SPIN_FREE), ("triton-ascend", "not the kernel's"),
                         (killed(), {}, SPIN_FREE)),
    "died_while_running": ((killed(), {}, ""), ("author", "the process died"), (killed("cuda-compile"), {}, "")),
    "odd_one_out": ((rec(), {"interpret": PASSED}, ""), ("triton-ascend", "interpret passes"), (rec(), {}, "")),
    "compiler_aborted": ((compile_failed("ascend-compile", "LLVM ERROR: cannot select", "crash"), {}, ""),
                         ("triton-ascend", "aborted"),
                         (compile_failed("ascend-compile", "a frontend error", "frontend"), {}, "")),
    "provisional": ((rec("interpret"), {}, ""), ("author", "Triton's interpreter"), None),
}


def seen(record: dict, others: dict, source: str) -> CaseEvidence:
    return CaseEvidence.of(record, others, source)


@pytest.mark.parametrize("name", list(CASES))
def test_each_rule_answers_its_case_and_declines_another(name):
    rule = getattr(rules, name)
    answers, (who, word), declines = CASES[name]
    owner = rule(answers[0], seen(*answers))
    assert owner is not None and owner.who == who and word in owner.evidence, owner
    if declines is not None:
        assert rule(declines[0], seen(*declines)) is None
    else:  # the last rule answers whatever the record: every other rule's declined case too
        assert all(rule(c[2][0], seen(*c[2])) is not None for c in CASES.values() if c[2] is not None)


@pytest.mark.parametrize("name", list(CASES))
def test_each_rule_decides_its_case_through_the_table(name):
    """No earlier rule takes a rule's case: the table reaches every rule, and its answer is the verdict."""
    answers = CASES[name][0]
    rule = getattr(rules, name)
    assert first_answer(answers[0], seen(*answers)).as_json() == rule(answers[0], seen(*answers)).as_json()
    earlier = rules.RULES[:rules.RULES.index(rule)]
    assert [r.__name__ for r in earlier if r(answers[0], seen(*answers)) is not None] == []


def documented_order(doc: str) -> list[str]:
    """The rule names of a docstring's numbered list (`1. \\`name\\`: ...`), in its order."""
    return re.findall(r"^\s*\d+\. `(\w+)`", doc, re.MULTILINE)


def defined_rules(module: object) -> set[str]:
    """The module's own public functions that take (record, seen): its rules."""
    return {name for name, f in inspect.getmembers(module, inspect.isfunction)
            if f.__module__ == getattr(module, "__name__", None) and not name.startswith("_")
            and list(inspect.signature(f).parameters) == ["record", "seen"]}


def test_the_table_runs_in_the_order_the_docstring_states_and_holds_every_rule():
    names = [r.__name__ for r in rules.RULES]
    assert documented_order(rules.__doc__ or "") == names
    assert len(set(names)) == len(names) and defined_rules(rules) == set(names)
    assert set(CASES) == set(names)  # each rule has its test case here
    assert names[-1] == "provisional"


def test_the_order_and_membership_checks_can_fail():
    doc = "1. `a`: one;\n2. `b`: two;\n"
    assert documented_order(doc) == ["a", "b"] and documented_order(doc) != ["b", "a"]  # a swapped table differs
    planted = types.ModuleType("planted")  # a rule defined beside the table but left out of it, and two non-rules

    def stray(record, seen):
        return None

    def _helper(record, seen):
        return None

    def first(record, others):
        return None

    for f in (stray, _helper, first):
        f.__module__ = "planted"
        setattr(planted, f.__name__, f)
    assert defined_rules(planted) == {"stray"}
