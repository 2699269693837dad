"""What a tier limit's regexes cannot say: the record's own shape (a wrong value or an error) and the `fits` tests
of the limits table (parity.triage.limits), pure over a record and the kernel's source."""

from __future__ import annotations

import re
import signal

from parity.results import Record, Status


def is_numeric(record: Record) -> bool:
    """A wrong value (compared and differed), not an error, a crash or a compile failure."""
    comp = record.get("compile") or {}
    return record.get("status") in (Status.FAILED, Status.XFAILED) and not comp and bool(record.get("metrics"))


def failure_text(record: Record) -> str:
    """The reason and compile messages, with the quotes an exception nested in another one's repr escapes (`\\'`)
    read plain, so a limit's message matches at any depth (the interpreter wraps errors in InterpreterError)."""
    comp = record.get("compile") or {}
    text = "\n".join(str(x) for x in (record.get("reason"), comp.get("message"), comp.get("launch_error")) if x)
    return text.replace("\\'", "'")


def divides_by_a_block_ptr_stride(record: Record, source: str) -> bool:
    """Every argument the module divides by is named inside a make_block_ptr call of the kernel's source (its
    strides): a zero division of the kernel's own (`x // n`) stays the author's."""
    names = re.findall(r"divides by (\w+) \(%arg\d+\)", failure_text(record))
    calls = []
    for start in (m.end() for m in re.finditer(r"make_block_ptr\(", source)):
        depth, end = 1, start
        while end < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        calls.append(source[start:end])
    return bool(names) and all(any(re.search(rf"\b{n}\b", c) for c in calls) for n in names)


def stores_a_lower_rank_value(record: Record, source: str) -> bool:
    """The rank mismatch is raised at a tl.store / atomic (the line above the frontend's caret) and the value's rank
    is below the pointer's: what Triton 3.6 broadcasts. A value of higher rank than its pointer is wrong on every
    version, and a mismatch in any other operation is no store's."""
    text = failure_text(record)
    shapes = re.search(r"Cannot broadcast, rank mismatch: \[([^\]]*)\], \[([^\]]*)\]", text)
    if shapes is None:
        return False
    value_rank, pointer_rank = (len([dim for dim in s.split(",") if dim.strip()]) for s in shapes.groups())
    lines = text.splitlines()
    at = [lines[i - 1] for i in range(1, len(lines)) if lines[i].strip() == "^"]
    return value_rank < pointer_rank and bool(at) and bool(re.search(r"\b(store|atomic_\w+)\(", at[-1]))


# TF32 keeps 10 of fp32's 23 mantissa bits (unit roundoff 2^-11 ~ 4.9e-4): a dot's rounding shows as a relative
# error of a few times that; beyond this the values are wrong, not rounded
TF32_MAX_ERR_RATIO = 2e-2
TF32_MIN_MISMATCH = 0.01  # the fraction of elements outside an fp32 tolerance that rounding leaves at least
# a dot whose precision is pinned to full fp32: TF32 cannot explain its error
_FULL_FP32_DOT = re.compile(r"input_precision\s*=\s*['\"](ieee|tf32x3)['\"]|allow_tf32\s*=\s*False")


def tf32_bound(record: Record) -> tuple[float, str]:
    """The largest err_ratio TF32's rounding explains, and how it was had: 2^-10 * sqrt(K) (two operands rounded to
    2^-11 each, K products adding as a random walk; parity.triage.precision) where the case names K, else
    TF32_MAX_ERR_RATIO."""
    k = (record.get("params") or {}).get("K")
    if isinstance(k, int) and k > 0:
        return 2.0 ** -10 * k ** 0.5, f"2^-10 * sqrt(K) = {2.0 ** -10 * k ** 0.5:.2g} at K={k}"
    return TF32_MAX_ERR_RATIO, f"{TF32_MAX_ERR_RATIO:g}, the case names no K"


def tf32_rounding(record: Record, source: str) -> bool:
    """An fp32 case whose wrong values are TF32's rounding in size: no NaN, err_ratio above zero and within
    tf32_bound, and the kernel's dots are not pinned to full fp32."""
    if str((record.get("params") or {}).get("dtype")) not in ("fp32", "float32"):
        return False
    metrics = record.get("metrics") or {}
    ratio = metrics.get("err_ratio")
    if metrics.get("nan_count") or not isinstance(ratio, (int, float)) or not 0 < ratio <= tf32_bound(record)[0]:
        return False
    # rounding touches the whole output; a few wrong elements (one tile, the tail) are a bug that a small
    # err_ratio over a large output hides
    frac, region = metrics.get("mismatch_frac"), str(metrics.get("region") or "")
    if (isinstance(frac, (int, float)) and frac < TF32_MIN_MISMATCH) or region.startswith("tail") or "only" in region:
        return False
    return not _FULL_FP32_DOT.search(source or "")


def killed_by_sigfpe(record: Record, source: str) -> bool:
    """The case's process was killed by SIGFPE: x86 traps an integer division or remainder by zero (and INT_MIN / -1)
    that the kernel's data asks for, where a GPU or an NPU returns a value and goes on."""
    code = (record.get("crash") or {}).get("returncode")
    return record.get("status") == Status.CRASHED and code == -int(signal.SIGFPE)
