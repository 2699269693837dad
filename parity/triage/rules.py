"""The owner rules as data: `RULES`, small named rules tried in order on a failing record; the first that answers
(an Owner, not None) decides (parity.triage.decide.first_answer). Each takes the record and its `CaseEvidence`
(parity.triage.case).

The order (tests/test_triage_rules.py holds RULES to it):
1. `known_divergence`: a spec's known divergence → its author where they document it, else the vendor it links;
2. `within_rounding`: every mismatch within a correct kernel's rounding → the spec's tolerance;
3. `recorded_reference`: bf16 outputs a replay was recorded with under the interpreter → that tier limit,
   provisional;
4. `kernel_mistake`: a known kernel mistake (parity.run.mistakes) → the author;
5. `out_of_bounds_store`: a red-zone write or memcheck error with an unmasked tl.load/tl.store → the author;
6. `later_launch_option`: a launch option of a triton-ascend newer than the installed one → the environment;
7. `missing_ascend_module`: a library's kernel compiled against its fallback for a triton-ascend module the
   installed one lacks → the environment;
8. `device_memory`: the device out of memory at run time → the environment;
9. `random_stream_differs`: a random stream that differs with its distribution right
   (parity.triage.random_stream) → `random`;
10. `summation_order`: a replay's fp32 mismatch that summation order or the recording's TF32 explains
    (parity.triage.replay_order);
11. `known_limit`: a language rule, tier limit or vendor bug already reported upstream (parity.triage.limits) →
    the author (rule), the tier (limit) or that vendor (a note pointing at the report), unless another tier
    fails the same way (then the kernel is wrong everywhere: the author);
12. `ascend_only_construct`: upstream Triton rejecting what only triton-ascend accepts → the author;
13. `config_overflow`: a config the target cannot hold (UB, shared memory, registers, the grid) → the author;
14. `fails_the_same_way`: the same case fails the same way on another tier → the author;
15. `missing_environment`: a module or tool that is not installed → the environment;
16. `red_zone_settles`: a crash or hang that a red-zone tier settles (parity.triage.unreproduced);
17. `died_while_running`: a process that died while the kernel ran → the author, provisional;
18. `odd_one_out`: the vendor's tool is the odd one out (its tier fails, the other family's pass) → that vendor;
19. `compiler_aborted`: a compiler that aborts, hangs or asserts → that tier's compiler, on its own evidence;
20. `provisional`: nothing else to go on → a provisional guess, with the run that would settle it (always answers).

Rules 6-10 are this tier's own evidence, whatever another tier shows (a different error there is no "same way").
Two kinds of evidence never name a vendor: a case whose process died while the kernel ran (a crash on a tier
that computes: the kernel's own stray access is the usual cause) unless a red-zone tier computed the same case
right (16), and a compile tier's pass against a failure at run time (compiling says nothing about the values or
the memory a kernel touches).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import parity.triage.precision as precision
import parity.triage.random_stream as random_stream
import parity.triage.replay_order as replay_order
import parity.triage.unreproduced as unreproduced
from parity.compile.ascend_only import ASCEND_ONLY_OPTIONS, LATER_ASCEND_MODULES, language_finding, later_option
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.case import (
    CaseEvidence,
    comp_stage,
    died_running,
    failed_at_run_time,
    is_failing,
    key,
    oob_stores,
    passes,
    same_way,
    where_words,
)
from parity.triage.inputs import recorded_reference_owner, rounding_owner
from parity.triage.limit_fits import is_numeric, tf32_bound
from parity.triage.limits import matching_limit
from parity.triage.owner import LINKED, VENDORS, make_owner
from parity.triage.tiers import computes, family, interpreted, runs_upstream, settle_run, vendor_of

Rule = Callable[[Record, CaseEvidence], Owner | None]

AUTHOR = "kernel author"
CONFIG_KINDS = ("ub_overflow", "cc_overflow", "out_of_resources")
CRASH_KINDS = ("crash", "timeout")
# an internal assertion of a compiler: its own bug whatever the kernel (an invalid kernel gets a diagnostic)
ASSERTION = re.compile(r"Assertion .* failed|LLVM ERROR|UNREACHABLE|Aborted|core dumped|"
                       r"only support ReinterpretCastOp", re.IGNORECASE)
# the device's memory ran out at run time (CUDA's and torch's words; torch_npu's "NPU out of memory"): it is
# shared by the xdist workers and whatever else runs there, so it says nothing about the kernel. Not Triton's
# "out of resource: shared memory", which is a config the target cannot hold (config_overflow)
DEVICE_MEMORY = re.compile(r"\bout of memory\b|OutOfMemoryError", re.IGNORECASE)
# a value the kernel needed came out as None: what a called function with no implementation returns at compile
# time (triton-ascend maps triton.language.extra.libdevice's stubs to nothing)
NONE_VALUE = re.compile(r"NoneType")
# a block pointer whose order is not literal (a generated kernel's `order=(in1_stride_order0, ...)`)
PERMUTED_ORDER = re.compile(r"make_block_ptr\([^#]*?order\s*=\s*\(\s*[A-Za-z_]")
ASCEND_LINK = re.compile(r"triton-ascend|Ascend")  # a known divergence's link to triton-ascend's tracker or docs
ENVIRONMENT = re.compile(r"No module named '(?!triton)|cannot open shared object file|No space left on device|"
                         r"command not found|is not installed", re.IGNORECASE)


def known_divergence(record: Record, seen: CaseEvidence) -> Owner | None:
    known = record.get("known_divergence")
    if record.get("status") != Status.XFAILED or not known:
        return None
    link = known.get("link", "")
    if known.get("expected_by"):  # the kernel's own author documents it: theirs, and they already know
        finding = record.get("finding_of") or {}
        who, name = (OwnerKind.LIBRARY, finding["name"]) if finding.get("name") else (OwnerKind.AUTHOR, AUTHOR)
        return make_owner(who, name, f"expected by {known['expected_by']}: {known.get('reason')} ({link})")
    who, name = _owner_of_link(link, seen.tier)
    return make_owner(who, name, LINKED.format(link=link))


def within_rounding(record: Record, seen: CaseEvidence) -> Owner | None:
    return rounding_owner(record)


def recorded_reference(record: Record, seen: CaseEvidence) -> Owner | None:
    return recorded_reference_owner(record)


def kernel_mistake(record: Record, seen: CaseEvidence) -> Owner | None:
    diagnosis = record.get("diagnosis")
    return make_owner(OwnerKind.AUTHOR, AUTHOR, f"a known kernel mistake: {diagnosis.get('what')}") \
        if diagnosis else None


def out_of_bounds_store(record: Record, seen: CaseEvidence) -> Owner | None:
    """The kernel's own unmasked store wrote into a red zone: wrong on any tier, whatever the values."""
    stores = oob_stores(record)
    if not stores:
        return None
    tool = (record.get("oob") or {}).get("tool")
    how = f"{tool} found invalid memory accesses" if tool else "parity's red zones found an out-of-bounds write"
    return make_owner(OwnerKind.AUTHOR, AUTHOR,
                      f"{how} on {seen.tier}, with an unmasked tl.load/tl.store in the kernel ({stores[0]})")


def later_launch_option(record: Record, seen: CaseEvidence) -> Owner | None:
    """The library targets a triton-ascend newer than the one installed."""
    later = later_option(seen.text) if family(seen.tier).owner is OwnerKind.TRITON_ASCEND else None
    if later is None:
        return None
    option, when, link = later
    return make_owner(OwnerKind.ENVIRONMENT, "triton-ascend version",
                      f"`{option}` is a launch option the installed triton-ascend does not have: it was {when} "
                      f"({link}); run the library with a triton-ascend built from a later commit")


def missing_ascend_module(record: Record, seen: CaseEvidence) -> Owner | None:
    """The library fell back from a module this triton-ascend lacks."""
    library = record.get("library") or {}
    missing = library.get("missing") if family(seen.tier).owner is OwnerKind.TRITON_ASCEND else None
    if not (missing and NONE_VALUE.search(seen.text)):
        return None
    module = missing[0]
    when, link = LATER_ASCEND_MODULES.get(module, ("absent from the installed triton-ascend", ""))
    return make_owner(OwnerKind.ENVIRONMENT, "triton-ascend version",
                      f"{library.get('name', 'the library')} asks for `{module}`, absent from the "
                      f"installed triton-ascend ({when}; {link}); its fallback compiles to no value (a "
                      "'NoneType' in the error): run it with a triton-ascend built from a later commit")


def device_memory(record: Record, seen: CaseEvidence) -> Owner | None:
    if not DEVICE_MEMORY.search(seen.text) or seen.comp:
        return None
    return make_owner(OwnerKind.ENVIRONMENT, "device memory",
                      f"the device ran out of memory at run time: {key(seen.text)}; its memory is shared by the "
                      "run's workers and any other process, so re-run the case alone (fewer -n workers, or "
                      "-k on the case) before reading it as the kernel's")


def random_stream_differs(record: Record, seen: CaseEvidence) -> Owner | None:
    """A random kernel's own stream, its distribution right."""
    stream = random_stream.evidence(record, seen.source)
    return make_owner(OwnerKind.RANDOM, random_stream.NAME, stream, limit=random_stream.LIMIT) \
        if stream is not None else None


def summation_order(record: Record, seen: CaseEvidence) -> Owner | None:
    """Two correct fp32 answers: tried before any "same way" rule."""
    return replay_order.replay_owner(record, seen.others, seen.source)


def known_limit(record: Record, seen: CaseEvidence) -> Owner | None:
    limit = matching_limit(record, seen.source)
    if limit is None:
        return None
    tier, passing = seen.tier, seen.passing
    if limit.who is not OwnerKind.AUTHOR and seen.failing_same:  # a tool's own defect does not explain another's
        beyond = f"{tier}'s own limit" if limit.who is OwnerKind.TIER else f"{limit.name}'s known bug"
        return make_owner(OwnerKind.AUTHOR, AUTHOR,
                          f"{tier} and {', '.join(seen.failing_same)} fail the same way{where_words(record)}; the "
                          f"kernel is wrong beyond {beyond} ({limit.id})")
    evidence = f"{limit.what} ({limit.link})"
    if limit.who in VENDORS:  # already reported upstream: a note pointing there
        return make_owner(limit.who, limit.name, f"already reported: {evidence}", limit=limit.id)
    if limit.who is OwnerKind.TIER:
        sure = bool(passing) or limit.evident  # raised inside the tier's own code: proof enough
        proof = f"; {', '.join(passing)} pass{'es' if len(passing) == 1 else ''} it" if passing else \
            "; raised inside the tier's own code" if limit.evident else ""
        return make_owner(OwnerKind.TIER, limit.name, evidence + proof, provisional=not sure,
                          settle=None if sure else settle_run(tier), limit=limit.id)
    if limit.id == precision.LIMIT:  # TF32's rounding: the precision mode, its compile evidence and bound
        evidence = precision.explain(record, seen.others, tf32_bound(record)[1])
    return make_owner(OwnerKind.AUTHOR, AUTHOR, evidence, limit=limit.id)


def ascend_only_construct(record: Record, seen: CaseEvidence) -> Owner | None:
    if family(seen.tier).owner is OwnerKind.TRITON_ASCEND:
        return None
    option = re.search(r"Keyword argument (\w+) was specified but unrecognised", seen.text)
    if not (language_finding(seen.text) or "triton-ascend launch option" in seen.text
            or (option and option.group(1) in ASCEND_ONLY_OPTIONS)):
        return None
    return make_owner(OwnerKind.AUTHOR, AUTHOR,
                      "the kernel uses what only triton-ascend accepts (an NPU launch option or language "
                      "extension); upstream Triton rejects it by design")


def config_overflow(record: Record, seen: CaseEvidence) -> Owner | None:
    kind = seen.kind
    text = seen.text
    if not (kind in CONFIG_KINDS or "ub overflow" in text.lower() or "exceeds CUDA's grid limits" in text
            or "grid should be less than" in text):
        return None
    if kind == "ub_overflow" and not (record.get("fit") or {}).get("fitting") and PERMUTED_ORDER.search(seen.source):
        # FlagGems' broadcast operand: a 1x16x8x2 fp32 tile with order=(0, 1, 2, 3) needs 8,454,144 bits on
        # triton-ascend 3.2.0, the same tile with order=(3, 2, 1, 0) fits: the permuted block's lowering, not
        # the tile, may be what overflows
        return make_owner(OwnerKind.AUTHOR, AUTHOR,
                          "a config the target cannot hold (ub_overflow), and no smaller config was found; the "
                          "kernel's block pointers take their order from arguments, and triton-adapter lowers a "
                          "permuted order as a transpose of the tile, which may be what overflows",
                          provisional=True, settle="compile the launch with every block pointer's order=(n-1, "
                          "..., 1, 0): if it fits, the overflow is triton-ascend's lowering, not the tile")
    return make_owner(OwnerKind.AUTHOR, AUTHOR, f"a config the target cannot hold ({kind or 'grid/UB'})")


def fails_the_same_way(record: Record, seen: CaseEvidence) -> Owner | None:
    if not seen.failing_same:
        return None
    return make_owner(OwnerKind.AUTHOR, AUTHOR,
                      f"{seen.tier} and {', '.join(seen.failing_same)} fail the same way{where_words(record)}")


def missing_environment(record: Record, seen: CaseEvidence) -> Owner | None:
    if not ENVIRONMENT.search(seen.text) or "import error" in seen.text:
        return None
    return make_owner(OwnerKind.ENVIRONMENT, "environment", f"a module or tool is missing: {key(seen.text)}")


def red_zone_settles(record: Record, seen: CaseEvidence) -> Owner | None:
    """A crash or hang the red-zone tier does not reproduce (or reproduces: then the author's)."""
    settled = unreproduced.settle(record, seen.others, seen.source)
    if settled is None:
        return None
    who, name = vendor_of(seen.tier) if settled.who is None else (settled.who, settled.name)
    return make_owner(who, name, settled.evidence, limit=settled.limit)


def died_while_running(record: Record, seen: CaseEvidence) -> Owner | None:
    if not died_running(record):
        return None
    return make_owner(OwnerKind.AUTHOR, AUTHOR,
                      f"the process died while the kernel ran on {seen.tier} ({key(seen.text)}); a crash on a tier "
                      "that computes is usually the kernel's own out-of-bounds access (an unmasked tl.load or "
                      "tl.store), and no tool is blamed on the strength of a crash", provisional=True,
                      settle=f"the repro in a fresh process, and the same case on a tier with red zones "
                      f"({settle_run(seen.tier)})")


def odd_one_out(record: Record, seen: CaseEvidence) -> Owner | None:
    """A vendor verdict where this tier's tool alone fails: the other family passes, none of its own fails."""
    tier, others = seen.tier, seen.others
    mine = family(tier)
    other_pass = sorted(t for t, r in others.items() if family(t) != mine and passes(r)
                        and (computes(t) or not failed_at_run_time(record)))
    if not other_pass:
        if interpreted(tier):  # the interpreter against a compiled upstream tier of its own family
            compiled = sorted(t for t, r in others.items() if runs_upstream(t) and passes(r))
            if compiled and is_numeric(record):
                return make_owner(OwnerKind.TRITON, "Triton interpreter",
                                  f"{', '.join(compiled)} gives the reference's values; only the interpreter differs"
                                  f"{where_words(record)}")
        return None
    if interpreted(tier):
        if not is_numeric(record) and record.get("status") != Status.CRASHED:
            return None  # an interpreter error on code a compiler takes: the compilers check less than it does
        return make_owner(OwnerKind.TRITON, "Triton interpreter",
                          f"{', '.join(other_pass)} pass{'es' if len(other_pass) == 1 else ''}; only the interpreter "
                          f"differs{where_words(record)}")
    who, name = vendor_of(tier)
    upstream = mine.owner is OwnerKind.TRITON
    if upstream and not is_numeric(record) and not (seen.kind in CRASH_KINDS or comp_stage(record)):
        # upstream's frontend rejecting what triton-ascend accepts is a language difference, not a bug
        return make_owner(OwnerKind.AUTHOR, AUTHOR,
                          f"upstream Triton's frontend rejects the kernel ({key(seen.text)}) while "
                          f"{', '.join(other_pass)} accept{'s' if len(other_pass) == 1 else ''} it: a portability "
                          "divergence the author must handle")
    what = ("gives different values" + where_words(record)) if is_numeric(record) else f"fails ({key(seen.text)})"
    return make_owner(who, name, f"{tier} {what} while {_passing_words(other_pass)}")


def compiler_aborted(record: Record, seen: CaseEvidence) -> Owner | None:
    """A compiler that dies is its own evidence; a run tier's dead process may be the kernel's own stray access."""
    kind = seen.kind
    crashed = record.get("status") == Status.CRASHED and bool(seen.comp)
    if not (kind in CRASH_KINDS or crashed or ASSERTION.search(seen.text)):
        return None
    who, name = vendor_of(seen.tier)
    return make_owner(who, name, f"the compiler aborted or hung ({kind or 'crash'}): {key(seen.text)}")


def provisional(record: Record, seen: CaseEvidence) -> Owner:
    tier, others = seen.tier, seen.others
    settle = settle_run(tier)
    left = f" (other tiers seen: {', '.join(sorted(others))})" if others else " (no other tier's record of this case)"
    if interpreted(tier):
        return make_owner(OwnerKind.AUTHOR, AUTHOR,
                          "fails under Triton's interpreter, whose semantics are the reference" + left,
                          provisional=True, settle=settle)
    if not is_numeric(record) and seen.kind in ("mlir_error",) and comp_stage(record):
        who, name = vendor_of(tier)
        return make_owner(who, name, f"the compiler fails past its frontend ({comp_stage(record)}): "
                          f"{key(seen.text)}" + left, provisional=True, settle=settle)
    failing = sorted(t for t, r in others.items() if is_failing(r) and r.get("status") != Status.XFAILED)
    # a tier of the same frontend failing alike is no evidence either way, but it is no "another error"
    alike = [t for t in failing if same_way(record, others[t])]
    differently = [t for t in failing if t not in alike]
    where = f"fails on {tier}" + (f", the same way on {', '.join(alike)}" if alike else "") + \
        (f", and with another error on {', '.join(differently)}" if differently else "") + \
        ("" if failing else " alone")
    return make_owner(OwnerKind.AUTHOR, AUTHOR, f"{where}; no tier shows the vendor's tool as the odd one out" + left,
                      provisional=True, settle=settle)


RULES: tuple[Rule, ...] = (
    known_divergence, within_rounding, recorded_reference, kernel_mistake, out_of_bounds_store, later_launch_option,
    missing_ascend_module, device_memory, random_stream_differs, summation_order, known_limit, ascend_only_construct,
    config_overflow, fails_the_same_way, missing_environment, red_zone_settles, died_while_running, odd_one_out,
    compiler_aborted, provisional,
)


def _owner_of_link(link: str, tier: str) -> tuple[OwnerKind, str]:
    if ASCEND_LINK.search(link):
        return OwnerKind.TRITON_ASCEND, "triton-ascend"
    if "triton-lang/triton/" in link:
        return vendor_of(tier) if family(tier).owner is OwnerKind.TRITON else (OwnerKind.TRITON, "Triton")
    return OwnerKind.AUTHOR, AUTHOR


def _passing_words(tiers: list[str]) -> str:
    """Passing tiers in the words their mode earns: a compile-only tier compiled the case, it ran no inputs."""
    ran, built = [t for t in tiers if computes(t)], [t for t in tiers if not computes(t)]
    said = ([f"{', '.join(ran)} pass{'es' if len(ran) == 1 else ''} the same case on the same inputs"] if ran else []) \
        + ([f"{', '.join(built)} compile{'s' if len(built) == 1 else ''} it"] if built else [])
    return " and ".join(said)
