"""Reading what triton-ascend and bishengir-compile say: pure functions, no triton import.

They turn a compiler's text into the fields of a compile record (stage reached, error
kind, buffer bits) and judge a launch grid against the NPU's limits, so the backend
only gathers text and the rules stay testable anywhere.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from parity.backends.ascend.arch import MAX_GRID_BLOCKS

# bishengir-compile without CANN's hivmc stops after its own pipeline (UB planning included)
HIVMC_MISSING = "External hivmc run fails"
# "ub overflow, requires 67108864 bits while 1572864 bits available"; L0C reads "cc overflow"
OVERFLOW_RE = re.compile(r"\b(\w+) overflow, requires (\d+) bits while (\d+) bits available", re.IGNORECASE)
GRID_LIMIT_TEXT = "grid should be less than 65536!"
# how grid_finding (the compile-only driver's own check) quotes the real launcher: its words are not the launcher's
QUOTES_LAUNCHER = "; the triton-ascend launcher says "
# triton-ascend names its stages in MLIRCompilationError; the stage before the failing one is the last produced
STAGE_BEFORE = {"MLIRCompile": None, "ConvertTritonIRToLinalgIR": "ttir", "ConvertLinalgRToBinary": "ttadapter"}
# lines that say nothing about the kernel: banners, cache paths, the missing hivmc
_NOISE_RE = re.compile(r"^(///-+\[ERROR\]\[Triton\]|\[INFO\]: The compiled kernel cache|\[ERROR\] Cannot find hivmc|"
                       r"\[ERROR\] Failed to run `hivmc|\[WARNING\] Failed to detect hivmc)")


@dataclass(frozen=True)
class Diagnosis:
    error_kind: str | None
    stage_reached: str | None
    ub_bits: int | None = None
    ub_limit_bits: int | None = None


def hivmc_only_failure(text: str) -> bool:
    """True when the only error is the missing hivmc: BiShengIR itself ran clean."""
    errors = [line for line in text.splitlines() if "error:" in line]
    return bool(errors) and all(HIVMC_MISSING in line for line in errors)


def clean_message(text: str) -> str:
    """The compiler's text without banners and hivmc noise, blank lines collapsed."""
    lines = [line.rstrip() for line in text.splitlines()]
    kept = [line for line in lines if line.strip() and not _NOISE_RE.match(line.strip())]
    return "\n".join(kept)


# triton-ascend's MLIRCompilationError announces its stage; the compiler's output follows, or nothing does
_ANNOUNCED = re.compile(r"^\[\w+\] encounters error:\s*$")


def announced_only(message: str) -> bool:
    """Whether a cleaned message is only the stage's announcement ("[ConvertLinalgRToBinary] encounters
    error:"), with no compiler output after it (triton-ascend keeps only what precedes a stack dump)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return all(_ANNOUNCED.match(line) for line in lines)


def with_own_message(message: str, cause: BaseException | None) -> str:
    """A message that is only the announcement, completed with the exception triton-ascend wrapped (the failed
    tool's own error: its command, exit status, and whatever it printed on stdout)."""
    if not announced_only(message) or cause is None:
        return message
    own = f"{type(cause).__name__}: {' '.join(str(cause).split())}"
    output = getattr(cause, "stdout", None) or getattr(cause, "output", None)
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    said = clean_message(str(output or "")).strip()
    return "\n".join(x for x in (message.strip(), own, said[-1500:]) if x)


def diagnose(exc_type: str, stage_name: str | None, text: str) -> Diagnosis:
    """What a failed compile tells: its error kind, the last stage produced, and buffer bits.

    exc_type is the exception's class name; stage_name is MLIRCompilationError.stage_name.
    """
    if exc_type != "MLIRCompilationError":
        # the frontend (code generator) refused the kernel before any IR existed
        return Diagnosis("unsupported", None)
    stage = STAGE_BEFORE.get(stage_name or "", None)
    overflow = OVERFLOW_RE.search(text)
    if overflow:
        buffer, required, available = overflow.group(1).lower(), int(overflow.group(2)), int(overflow.group(3))
        if buffer == "ub":
            return Diagnosis("ub_overflow", stage, required, available)
        return Diagnosis(f"{buffer}_overflow", stage)
    return Diagnosis("mlir_error", stage)


def grid_finding(grid: Sequence[int]) -> str | None:
    """Why launching this grid on an Ascend NPU goes wrong, or None when it is fine."""
    blocks = math.prod(grid)
    if blocks > MAX_GRID_BLOCKS:
        return (f"grid {tuple(grid)} has {blocks} blocks > {MAX_GRID_BLOCKS}{QUOTES_LAUNCHER}"
                f"{GRID_LIMIT_TEXT!r} (use a persistent grid sized to the core count)")
    if blocks == 0:
        return (f"grid {tuple(grid)} has no blocks; on an NPU a launch with coreDim = 0 kills the process "
                "(https://github.com/FlagOpen/FlagGems/issues/5953): guard empty inputs in the launcher")
    return None
