"""The owner of one failing record, from its own evidence and the same case's records on other tiers.

Order of the rules (the first that applies wins):
0. the inputs and values (parity.triage.inputs): a spec's reference that raised → the spec's author; a damaged
   replay bundle → the bundle; every mismatch within a correct kernel's rounding → the spec's tolerance; bf16
   outputs a replay was recorded with under the interpreter → that tier limit, provisional;
1. a known kernel mistake (parity.run.mistakes) → the author;
2. this tier's own evidence about its environment (a device out of memory at run time, a launch option of
   a triton-ascend newer than the installed one, a library's kernel compiled against its fallback for a
   triton-ascend module the installed one lacks) → the environment, whatever another tier shows; then a random
   stream that differs with its distribution right (parity.triage.random_stream) → `random`, and a replay's fp32
   mismatch that summation order or the recording's TF32 explains (parity.triage.replay_order);
3. a language rule, tier limit or vendor bug already reported upstream (parity.triage.limits) → the author
   (rule), the tier (limit) or that vendor (with a note pointing at the report), unless another tier fails
   the same way (then the kernel is wrong everywhere: the author);
4. a config the target cannot hold (UB, shared memory, registers, the grid) → the author;
5. the same case fails the same way on another tier → the author;
6. the environment (a module or tool that is not installed) → the environment;
7. the vendor's tool is the odd one out (its tier fails, the other family's tiers pass) → that vendor;
8. a compiler that aborts, hangs or asserts → that tier's compiler, on its own evidence;
9. nothing else to go on → a provisional guess, with the run that would settle it.
Two kinds of evidence never name a vendor: a case whose process died while the kernel ran (a crash on a
tier that computes: the kernel's own stray access is the usual cause) unless a red-zone tier computed the same
case right (parity.triage.unreproduced), and a compile tier's pass against a failure at run time (compiling says
nothing about the values or the memory a kernel touches).
A vendor verdict whose case passes on a newer release of the same tier (the version matrix's dirs) is
"fixed in <release>; upgrade": a note, never a fresh upstream draft for a bug already fixed.
A kernel shipped by a library hands the author's verdicts (and today's library rule) to the library.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import parity.triage.precision as precision
import parity.triage.random_stream as random_stream
import parity.triage.replay_order as replay_order
import parity.triage.unreproduced as unreproduced
from parity.backends import backend_class
from parity.compile.ascend_only import ASCEND_ONLY_OPTIONS, LATER_ASCEND_MODULES, language_finding, later_option
from parity.reasons import key_line
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.evidence import PASSING
from parity.triage.inputs import input_owner, recorded_reference_owner, rounding_owner
from parity.triage.later_release import fixed_later
from parity.triage.limit_fits import failure_text, is_numeric, tf32_bound
from parity.triage.limits import matching_limit
from parity.triage.owner import LINKED, VENDORS, make_owner

FAILING = (Status.FAILED, Status.ERROR, Status.CRASHED, Status.XFAILED)
# owners whose verdict on another tier's record explains its failure by that tier's own tool (_explained)
EXPLAINING = (OwnerKind.TIER, OwnerKind.ENVIRONMENT, OwnerKind.RANDOM)
CONFIG_KINDS = ("ub_overflow", "cc_overflow", "out_of_resources")
CRASH_KINDS = ("crash", "timeout")
# an internal assertion of a compiler: its own bug whatever the kernel (an invalid kernel gets a diagnostic)
ASSERTION = re.compile(r"Assertion .* failed|LLVM ERROR|UNREACHABLE|Aborted|core dumped|"
                       r"only support ReinterpretCastOp", re.IGNORECASE)
# the device's memory ran out at run time (CUDA's and torch's words; torch_npu's "NPU out of memory"): it is
# shared by the xdist workers and whatever else runs there, so it says nothing about the kernel. Not Triton's
# "out of resource: shared memory", which is a config the target cannot hold (rule 4)
DEVICE_MEMORY = re.compile(r"\bout of memory\b|OutOfMemoryError", re.IGNORECASE)
# a value the kernel needed came out as None: what a called function with no implementation returns at compile
# time (triton-ascend maps triton.language.extra.libdevice's stubs to nothing)
NONE_VALUE = re.compile(r"NoneType")
# a block pointer whose order is not literal (a generated kernel's `order=(in1_stride_order0, ...)`)
PERMUTED_ORDER = re.compile(r"make_block_ptr\([^#]*?order\s*=\s*\(\s*[A-Za-z_]")
ASCEND_LINK = re.compile(r"triton-ascend|Ascend")  # a known divergence's link to triton-ascend's tracker or docs
ENVIRONMENT = re.compile(r"No module named '(?!triton)|cannot open shared object file|No space left on device|"
                         r"command not found|is not installed", re.IGNORECASE)


def family(tier: str) -> str:
    """The compiler family a tier's verdict speaks for: its vendor draft's tracker (Backend.tracker)."""
    return backend_class(tier).tracker


def interpreted(tier: str) -> bool:
    return backend_class(tier).mode == "interpret"


def runs_upstream(tier: str) -> bool:
    """A tier where upstream Triton's compiled kernel computes on a device (the GPU)."""
    cls = backend_class(tier)
    return cls.mode == "run" and cls.tracker == OwnerKind.TRITON


def vendor_of(tier: str) -> tuple[OwnerKind, str]:
    if interpreted(tier):
        return OwnerKind.TRITON, "Triton interpreter"
    if family(tier) == OwnerKind.TRITON_ASCEND:
        return OwnerKind.TRITON_ASCEND, "triton-ascend"
    return OwnerKind.TRITON, "Triton"


def is_failing(record: Record) -> bool:
    return record.get("status") in FAILING


def _passes(record: Record) -> bool:
    return record.get("status") in PASSING


def _where(record: Record) -> str:
    m = record.get("metrics") or {}
    return f" (worst at {m['worst_index']})" if m.get("worst_index") is not None else ""


def _same_way(mine: Record, other: Record) -> bool:
    """Both give wrong values, or both fail before any value with the same error (error_signature): two
    different errors are two findings, and counting them as one blamed the kernel for two tools' bugs."""
    if not is_failing(other) or other.get("status") == Status.XFAILED:
        return False
    if is_numeric(mine) or is_numeric(other):
        return is_numeric(mine) and is_numeric(other)
    a, b = error_signature(mine), error_signature(other)
    return bool(a and b) and (a == b or (min(len(a), len(b)) >= SIGNATURE_MIN and (a in b or b in a)))


SIGNATURE_MIN = 24  # a shorter signature inside a longer one is too generic to name the same error
_EXC_PREFIX = re.compile(r"^(?:[\w.]+\.)?\w+(?:Error|Exception):\s*")
_AT_LOC = re.compile(r"^at \d+:\d+:\s*")


def error_signature(record: Record) -> str:
    """What an error says, comparable across tiers: its key line without the exception's class (the interpreter
    raises the frontend's message bare, a compiler wraps it), source positions, numbers, case and spacing;
    '' where there is no message (a dead worker)."""
    line = _key(failure_text(record)).strip()
    for _ in range(3):  # CompilationError: at 3:20: ValueError: ...
        line = _AT_LOC.sub("", _EXC_PREFIX.sub("", line)).strip()
    line = re.sub(r"0x[0-9a-f]+|\d+", "#", line.lower())
    return " ".join(line.split())


def settle_run(tier: str) -> str:
    if family(tier) == OwnerKind.TRITON_ASCEND:
        return "the same case on interpret (nox -s interpret) and cuda-compile, then `python -m parity.cli report`"
    return ("the same case on ascend-lowered or ascend-compile (nox -s ascend-lowered), then "
            "`python -m parity.cli report`")


def decide(record: Record, others: Mapping[str, Record], source: str = "", library: Any = None,
           library_why: str | None = None, *, version: str | None = None,
           versions: Mapping[str, Record] | None = None) -> Owner | None:
    """The owner of a failing record, or None for one that did not fail. `others` maps each other tier
    to its record of the same case; `library` is the library that ships the kernel (or None), and
    `library_why` today's library rule's reason for this record (parity.triage.library_rule), if any. `versions`
    maps another release of the record's own compiler (`version`) to this tier's record of the same case
    built with it: a vendor bug that a newer release passes is already fixed there."""
    if not is_failing(record) or record.get("status") == Status.INTERRUPTED:
        return None
    bad_input = input_owner(record)
    if bad_input is not None:  # nothing ran that says anything about the kernel, or any tool: no rule below applies
        return bad_input
    verdict = _decide(record, others, source)
    if verdict.who in VENDORS and record.get("status") != Status.XFAILED:
        verdict = fixed_later(record, verdict, version, versions or {}) or verdict
    if library is not None:
        if verdict.who is OwnerKind.AUTHOR:
            verdict = replace(verdict, who=OwnerKind.LIBRARY, name=library.name)
        elif verdict.provisional and library_why and verdict.who is not OwnerKind.TIER:
            verdict = make_owner(OwnerKind.LIBRARY, library.name, f"{library_why} (parity's library rule)",
                                 provisional=True, settle=verdict.settle)
    return verdict


def _decide(record: Record, others: Mapping[str, Record], source: str) -> Owner:
    tier = str(record.get("backend"))
    comp = record.get("compile") or {}
    kind = comp.get("error_kind") or record.get("error_kind")
    text = failure_text(record)
    # another compiler, or the reference tier, failing the same way: evidence against the kernel (two tiers
    # of one compiler failing alike are not: they share its frontend)
    failing_same = same_way_elsewhere(record, others)
    passing = sorted(t for t, r in others.items() if _passes(r))

    known = record.get("known_divergence")
    if record.get("status") == Status.XFAILED and known:
        link = known.get("link", "")
        if known.get("expected_by"):  # the kernel's own author documents it: theirs, and they already know
            finding = record.get("finding_of") or {}
            who, name = (OwnerKind.LIBRARY, finding["name"]) if finding.get("name") else \
                (OwnerKind.AUTHOR, "kernel author")
            return make_owner(who, name, f"expected by {known['expected_by']}: {known.get('reason')} ({link})")
        who, name = _owner_of_link(link, tier)
        return make_owner(who, name, LINKED.format(link=link))
    by_values = rounding_owner(record) or recorded_reference_owner(record)
    if by_values is not None:
        return by_values
    if record.get("diagnosis"):
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          f"a known kernel mistake: {record['diagnosis'].get('what')}")
    stores = oob_stores(record)
    if stores:  # the kernel's own unmasked store wrote into a red zone: wrong on any tier, whatever the values
        how = (f"{oob_tool} found invalid memory accesses" if (oob_tool := (record.get("oob") or {}).get("tool"))
               else "parity's red zones found an out-of-bounds write")
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          f"{how} on {tier}, with an unmasked tl.load/tl.store in the kernel ({stores[0]})")
    # this tier's own evidence, whatever another tier shows (a different error there is no "same way")
    later = later_option(text) if family(tier) == OwnerKind.TRITON_ASCEND else None
    if later is not None:  # the library targets a triton-ascend newer than the one installed
        option, when, link = later
        return make_owner(OwnerKind.ENVIRONMENT, "triton-ascend version",
                          f"`{option}` is a launch option the installed triton-ascend does not have: it was {when} "
                          f"({link}); run the library with a triton-ascend built from a later commit")
    missing = (record.get("library") or {}).get("missing") if family(tier) == OwnerKind.TRITON_ASCEND else None
    if missing and NONE_VALUE.search(text):  # the library fell back from a module this triton-ascend lacks
        module = missing[0]
        when, link = LATER_ASCEND_MODULES.get(module, ("absent from the installed triton-ascend", ""))
        return make_owner(OwnerKind.ENVIRONMENT, "triton-ascend version",
                          f"{record['library'].get('name', 'the library')} asks for `{module}`, absent from the "
                          f"installed triton-ascend ({when}; {link}); its fallback compiles to no value (a "
                          "'NoneType' in the error): run it with a triton-ascend built from a later commit")
    if DEVICE_MEMORY.search(text) and not comp:
        return make_owner(OwnerKind.ENVIRONMENT, "device memory",
                          f"the device ran out of memory at run time: {_key(text)}; its memory is shared by the "
                          "run's workers and any other process, so re-run the case alone (fewer -n workers, or "
                          "-k on the case) before reading it as the kernel's")
    stream = random_stream.evidence(record, source)  # a random kernel's own stream, its distribution right
    if stream is not None:
        return make_owner(OwnerKind.RANDOM, random_stream.NAME, stream, limit=random_stream.LIMIT)
    ordered = replay_order.replay_owner(record, others, source)  # two correct fp32 answers, before "same way"
    if ordered is not None:
        return ordered
    limit = matching_limit(record, source)
    if limit is not None:
        if limit.who is not OwnerKind.AUTHOR and failing_same:  # a tool's own defect does not explain another's
            beyond = f"{tier}'s own limit" if limit.who is OwnerKind.TIER else f"{limit.name}'s known bug"
            return make_owner(OwnerKind.AUTHOR, "kernel author",
                              f"{tier} and {', '.join(failing_same)} fail the same way{_where(record)}; the kernel "
                              f"is wrong beyond {beyond} ({limit.id})")
        evidence = f"{limit.what} ({limit.link})"
        if limit.who in VENDORS:  # already reported upstream: a note pointing there
            return make_owner(limit.who, limit.name, f"already reported: {evidence}", limit=limit.id)
        if limit.who is OwnerKind.TIER:
            sure = bool(passing) or limit.evident  # raised inside the tier's own code: proof enough
            settle = None if sure else settle_run(tier)
            proof = f"; {', '.join(passing)} pass{'es' if len(passing) == 1 else ''} it" if passing else \
                "; raised inside the tier's own code" if limit.evident else ""
            return make_owner(OwnerKind.TIER, limit.name, evidence + proof, provisional=not sure, settle=settle,
                              limit=limit.id)
        if limit.id == precision.LIMIT:  # TF32's rounding: the precision mode, its compile evidence and bound
            evidence = precision.explain(record, others, tf32_bound(record)[1])
        return make_owner(OwnerKind.AUTHOR, "kernel author", evidence, limit=limit.id)
    if _ascend_only(record, text, tier):
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          "the kernel uses what only triton-ascend accepts (an NPU launch option or language "
                          "extension); upstream Triton rejects it by design")
    if kind in CONFIG_KINDS or "ub overflow" in text.lower() or "exceeds CUDA's grid limits" in text \
            or "grid should be less than" in text:
        if kind == "ub_overflow" and not (record.get("fit") or {}).get("fitting") and PERMUTED_ORDER.search(source):
            # FlagGems' broadcast operand: a 1x16x8x2 fp32 tile with order=(0, 1, 2, 3) needs 8,454,144 bits on
            # triton-ascend 3.2.0, the same tile with order=(3, 2, 1, 0) fits: the permuted block's lowering, not
            # the tile, may be what overflows
            return make_owner(OwnerKind.AUTHOR, "kernel author",
                              "a config the target cannot hold (ub_overflow), and no smaller config was found; the "
                              "kernel's block pointers take their order from arguments, and triton-adapter lowers a "
                              "permuted order as a transpose of the tile, which may be what overflows",
                              provisional=True, settle="compile the launch with every block pointer's order=(n-1, "
                              "..., 1, 0): if it fits, the overflow is triton-ascend's lowering, not the tile")
        return make_owner(OwnerKind.AUTHOR, "kernel author", f"a config the target cannot hold ({kind or 'grid/UB'})")
    if failing_same:
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          f"{tier} and {', '.join(failing_same)} fail the same way{_where(record)}")
    if ENVIRONMENT.search(text) and "import error" not in text:
        return make_owner(OwnerKind.ENVIRONMENT, "environment", f"a module or tool is missing: {_key(text)}")
    settled = unreproduced.settle(record, others, source)  # a crash or hang the red-zone tier does not reproduce
    if settled is not None:
        who, name = vendor_of(tier) if settled.who is None else (settled.who, settled.name)
        return make_owner(who, name, settled.evidence, limit=settled.limit)
    if died_running(record):
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          f"the process died while the kernel ran on {tier} ({_key(text)}); a crash on a tier that "
                          "computes is usually the kernel's own out-of-bounds access (an unmasked tl.load or "
                          "tl.store), and no tool is blamed on the strength of a crash", provisional=True,
                          settle=f"the repro in a fresh process, and the same case on a tier with red zones "
                          f"({settle_run(tier)})")
    odd = _odd_one_out(record, others, tier, kind)
    if odd is not None:
        return odd
    # a compiler that dies is its own evidence; a run tier's dead process may be the kernel's own stray access
    if kind in CRASH_KINDS or (record.get("status") == Status.CRASHED and comp) or ASSERTION.search(text):
        who, name = vendor_of(tier)
        return make_owner(who, name, f"the compiler aborted or hung ({kind or 'crash'}): {_key(text)}")
    return _provisional(record, others, tier, kind)


def oob_stores(record: Record) -> list[str]:
    """The unmasked tl.store lines behind the red-zone writes a record found (parity.run.redzone); a write with no
    unmasked store in sight (a lowering that drops a mask) is left to the other rules."""
    oob = record.get("oob") or {}
    writes = oob.get("writes") or []  # a store the red zone ties to the argument it caught first (its `accesses`)
    found = list(dict.fromkeys([*(a["where"] for w in writes for a in w.get("accesses") or []),
                                *(line for w in writes for line in w.get("unmasked_stores") or [])]))
    return found + list(oob.get("unmasked") or [])  # memcheck's invalid accesses (parity.run.sanitize)


def computes(tier: str) -> bool:
    """A tier whose pass says the kernel's values were right (it ran the kernel), not only that it compiled."""
    return backend_class(tier).mode != "compile"


def failed_at_run_time(record: Record) -> bool:
    """Wrong values, or a process that died running the kernel: a compile tier's pass is no evidence against it."""
    return is_numeric(record) or died_running(record)


def died_running(record: Record) -> bool:
    """A crash on a tier that runs the kernel, outside any compile (a compiler's own abort has compile evidence)."""
    comp = record.get("compile") or {}
    return record.get("status") == Status.CRASHED and computes(str(record.get("backend"))) and not comp.get("message")


def same_way_elsewhere(record: Record, others: Mapping[str, Record]) -> list[str]:
    """The tiers whose record fails as this one does and counts as evidence against the kernel: another
    compiler, or the reference tier (two tiers of one compiler failing alike share its frontend)."""
    tier = str(record.get("backend"))
    return sorted(t for t, r in others.items() if _same_way(record, r) and not _explained(r)
                  and (family(t) != family(tier) or (interpreted(t) or interpreted(tier))))


def _explained(record: Record) -> bool:
    """A record whose failure its own tool explains (a tier limit, a settled vendor verdict) says nothing
    about the kernel."""
    owner = record.get("owner")
    return owner is not None and (owner.who in EXPLAINING or (owner.who in VENDORS and not owner.provisional))


def _ascend_only(record: Record, text: str, tier: str) -> bool:
    if family(tier) == OwnerKind.TRITON_ASCEND:
        return False
    if language_finding(text) or "triton-ascend launch option" in text:
        return True
    option = re.search(r"Keyword argument (\w+) was specified but unrecognised", text)
    return bool(option and option.group(1) in ASCEND_ONLY_OPTIONS)


def _odd_one_out(record: Record, others: Mapping[str, Record], tier: str,
                 kind: str | None) -> Owner | None:
    """A vendor verdict where this tier's tool alone fails: the other family passes, none of its own fails."""
    mine = family(tier)
    other_pass = sorted(t for t, r in others.items() if family(t) != mine and _passes(r)
                        and (computes(t) or not failed_at_run_time(record)))
    if not other_pass:
        if interpreted(tier):  # the interpreter against a compiled upstream tier of its own family
            compiled = sorted(t for t, r in others.items() if runs_upstream(t) and _passes(r))
            if compiled and is_numeric(record):
                return make_owner(OwnerKind.TRITON, "Triton interpreter",
                                  f"{', '.join(compiled)} gives the reference's values; only the interpreter differs"
                                  f"{_where(record)}")
        return None
    if interpreted(tier):
        if not is_numeric(record) and record.get("status") != Status.CRASHED:
            return None  # an interpreter error on code a compiler takes: the compilers check less than it does
        return make_owner(OwnerKind.TRITON, "Triton interpreter",
                          f"{', '.join(other_pass)} pass{'es' if len(other_pass) == 1 else ''}; only the interpreter "
                          f"differs{_where(record)}")
    who, name = vendor_of(tier)
    if mine == OwnerKind.TRITON and not is_numeric(record) and not (kind in CRASH_KINDS or comp_stage(record)):
        # upstream's frontend rejecting what triton-ascend accepts is a language difference, not a bug
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          f"upstream Triton's frontend rejects the kernel ({_key(failure_text(record))}) while "
                          f"{', '.join(other_pass)} accept{'s' if len(other_pass) == 1 else ''} it: a portability "
                          "divergence the author must handle")
    what = ("gives different values" + _where(record)) if is_numeric(record) else \
        f"fails ({_key(failure_text(record))})"
    return make_owner(who, name, f"{tier} {what} while {_passing_words(other_pass)}")


def _passing_words(tiers: list[str]) -> str:
    """Passing tiers in the words their mode earns: a compile-only tier compiled the case, it ran no inputs."""
    ran, built = [t for t in tiers if computes(t)], [t for t in tiers if not computes(t)]
    said = ([f"{', '.join(ran)} pass{'es' if len(ran) == 1 else ''} the same case on the same inputs"] if ran else []) \
        + ([f"{', '.join(built)} compile{'s' if len(built) == 1 else ''} it"] if built else [])
    return " and ".join(said)


def comp_stage(record: Record) -> str | None:
    stage: str | None = (record.get("compile") or {}).get("stage_reached")
    return stage


def _provisional(record: Record, others: Mapping[str, Record], tier: str,
                 kind: str | None) -> Owner:
    seen = f" (other tiers seen: {', '.join(sorted(others))})" if others else " (no other tier's record of this case)"
    if interpreted(tier):
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          "fails under Triton's interpreter, whose semantics are the reference" + seen,
                          provisional=True, settle=settle_run(tier))
    if not is_numeric(record) and kind in ("mlir_error",) and comp_stage(record):
        who, name = vendor_of(tier)
        return make_owner(who, name, f"the compiler fails past its frontend ({comp_stage(record)}): "
                          f"{_key(failure_text(record))}" + seen, provisional=True, settle=settle_run(tier))
    failing = sorted(t for t, r in others.items() if is_failing(r) and r.get("status") != Status.XFAILED)
    # a tier of the same frontend failing alike is no evidence either way, but it is no "another error"
    alike = [t for t in failing if _same_way(record, others[t])]
    differently = [t for t in failing if t not in alike]
    where = f"fails on {tier}" + (f", the same way on {', '.join(alike)}" if alike else "") + \
        (f", and with another error on {', '.join(differently)}" if differently else "") + \
        ("" if failing else " alone")
    return make_owner(OwnerKind.AUTHOR, "kernel author",
                      f"{where}; no tier shows the vendor's tool as the odd one out" + seen,
                      provisional=True, settle=settle_run(tier))


def _owner_of_link(link: str, tier: str) -> tuple[OwnerKind, str]:
    if ASCEND_LINK.search(link):
        return OwnerKind.TRITON_ASCEND, "triton-ascend"
    if "triton-lang/triton/" in link:
        return vendor_of(tier) if family(tier) == OwnerKind.TRITON else (OwnerKind.TRITON, "Triton")
    return OwnerKind.AUTHOR, "kernel author"


def _key(text: str) -> str:
    """The message's key line, for one-line evidence."""
    return key_line(text)[:160]
