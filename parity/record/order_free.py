"""Replay's order-free comparison: a kernel that lets the compiler order its output (tl.cat(..., can_reorder=True))
is judged on its values as a multiset, since two devices may each order them their own way."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from parity.spec import Tolerance

# upstream's own test_cat checks only the sum and uniqueness of such an output
ORDER_FREE = re.compile(r"\bcan_reorder\s*=\s*True")
NOTE = ("; compared as sorted values: the kernel's tl.cat(can_reorder=True) lets each compiler order the elements "
        "(https://triton-lang.org/main/python-api/generated/triton.language.cat.html)")

Outputs = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, torch.Tensor]]


def lets_compiler_reorder(root: Path, info: Mapping[str, Any]) -> bool:
    """Whether the recorded kernel's captured source asks for a reorderable tl.cat."""
    try:
        return bool(info.get("source")) and bool(ORDER_FREE.search((root / info["source"]).read_text("utf-8")))
    except OSError:
        return False


def sorted_values(outputs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: (v.to(torch.uint8) if v.dtype == torch.bool else v).reshape(-1).sort().values
            for k, v in outputs.items()}


def applied(root: Path, info: Mapping[str, Any], launch: Outputs, reference: Outputs,
            tolerance: dict[str, Tolerance]) -> tuple[Outputs, Outputs, dict[str, Tolerance]]:
    """The replay's launch, reference and tolerances, compared order-free where the kernel allows reordering."""
    if not lets_compiler_reorder(root, info):
        return launch, reference, tolerance
    return (lambda inputs, p: sorted_values(launch(inputs, p)),
            lambda inputs, p: sorted_values(reference(inputs, p)),
            {k: dataclasses.replace(t, reason=t.reason + NOTE) for k, t in tolerance.items()})
