"""A library's own reference (its torch "golden") beside parity's fp64 one, checked whatever the kernel did.

A spec whose library ships a reference of its own passes `reference=SecondReference(ours, golden, ...)`:
it is called like any reference (it returns ours), and the runner also calls its `cross_check` on the same
fp64 inputs, before the launch. The check needs no kernel, so a kernel that fails, errors or never
compiles still gets it. Where the two references disagree beyond `tolerance`, a third, independent fp64
evaluation (`arbiter`, e.g. torch.nn.functional's op) says which of them is off; without one, or where it
sides with neither, the record says "undecided" and gives the numbers.

The verdict lands in the record as `second_reference` (REPORT.md lists every disagreement); it never
changes the kernel's status, which is judged against parity's fp64 reference only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

Tensors = Mapping[str, Any]
Params = Mapping[str, Any]
RefFn = Callable[[Tensors, Params], Mapping[str, torch.Tensor]]
OURS = "parity's fp64 reference"


@dataclass(frozen=True)
class SecondReference:
    ours: RefFn  # parity's fp64 reference: what the kernel is judged against
    golden: RefFn  # the library's own reference, run on the same fp64 inputs
    name: str  # how reports call the golden, e.g. "mojo's torch golden (MojoRMSNorm)"
    arbiter: RefFn | None = None  # a third, independent fp64 evaluation that settles a disagreement
    arbiter_name: str = ""  # e.g. "torch.nn.functional.rms_norm in fp64"
    # goldens may compute in fp32 inside (mojo's attention takes its softmax in fp32): agreement within that
    rtol: float = 1e-5
    atol: float = 1e-6

    def __call__(self, inputs: Tensors, params: Params) -> Mapping[str, torch.Tensor]:
        return self.ours(inputs, params)

    @property
    def __wrapped__(self) -> RefFn:
        # what it computes is ours: the reference cache keys on it and a repro embeds it (inspect.unwrap)
        return self.ours

    def cross_check(self, inputs: Tensors, params: Params,
                    ours: Mapping[str, torch.Tensor]) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
        """(the record's `second_reference`, the golden's outputs in fp64; empty where it raised)."""
        t0 = time.perf_counter()
        verdict: dict[str, Any] = {"name": self.name, "arbiter": self.arbiter_name or None,
                                   "tolerance": {"rtol": self.rtol, "atol": self.atol}}
        try:
            gold = {k: v.double() for k, v in self.golden(inputs, params).items()}
        except Exception as exc:  # the library's own reference cannot run: that is its finding
            verdict.update(agrees=False, wrong="golden", message=f"{self.name} raised {type(exc).__name__}: "
                           f"{str(exc)[:300]}")
            verdict["seconds"] = time.perf_counter() - t0
            return verdict, {}
        verdict.update(self._compare(inputs, params, gold, ours))
        verdict["seconds"] = time.perf_counter() - t0
        return verdict, gold

    def _compare(self, inputs: Tensors, params: Params, gold: Mapping[str, torch.Tensor],
                 ours: Mapping[str, torch.Tensor]) -> dict[str, Any]:
        missing = sorted(set(ours) - set(gold))
        if missing:
            return {"agrees": False, "wrong": "golden", "message": f"{self.name} returns no {missing}"}
        diffs = {n: _max_abs(gold[n], ref) for n, ref in ours.items()}
        bad = [n for n, ref in ours.items() if not self._close(gold[n], ref)]
        if not bad:
            return {"agrees": True, "wrong": None, "max_abs_diff": max(diffs.values(), default=0.0)}
        name = bad[0]
        third = self._arbiter(inputs, params)
        if third is None or name not in third:
            wrong, why = "undecided", "no independent third evaluation to settle it"
        else:
            gold_ok, ours_ok = self._close(gold[name], third[name]), self._close(ours[name], third[name])
            gap = (f"{self.arbiter_name or 'the arbiter'} is {_max_abs(gold[name], third[name]):.3g} from the golden "
                   f"and {_max_abs(ours[name], third[name]):.3g} from ours")
            wrong, why = (("golden", gap) if ours_ok and not gold_ok else
                          (OURS, gap) if gold_ok and not ours_ok else ("undecided", f"{gap}: it sides with neither"))
        side = {"golden": f"{self.name} is the one that is off", OURS: f"{OURS} is the one that is off",
                "undecided": "undecided which is off"}[wrong]
        message = (f"output {name!r}: {self.name} differs from {OURS} by max |d| {diffs[name]:.3g} "
                   f"(beyond rtol={self.rtol:g}, atol={self.atol:g}); {side} ({why})")
        return {"agrees": False, "wrong": wrong, "output": name, "max_abs_diff": diffs[name], "message": message}

    def _arbiter(self, inputs: Tensors, params: Params) -> Mapping[str, torch.Tensor] | None:
        if self.arbiter is None:
            return None
        try:
            return {k: v.double() for k, v in self.arbiter(inputs, params).items()}
        except Exception:  # an arbiter that cannot run settles nothing
            return None

    def _close(self, a: torch.Tensor, b: torch.Tensor) -> bool:
        return a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=self.rtol, atol=self.atol,
                                                     equal_nan=True)


def _max_abs(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.shape != b.shape:
        return float("inf")
    return (a.double() - b.double()).abs().max().item() if a.numel() else 0.0


def cross_check(reference: Any, inputs: Tensors, params: Params,
                ours: Mapping[str, torch.Tensor]) -> tuple[dict[str, Any] | None, dict[str, torch.Tensor]]:
    """The runner's entry: the verdict of a SecondReference, or (None, {}) for a plain reference."""
    if not isinstance(reference, SecondReference):
        return None, {}
    return reference.cross_check(inputs, params, ours)


def note_kernel(verdict: dict[str, Any], gold: Mapping[str, torch.Tensor],
                outputs: Mapping[str, torch.Tensor]) -> None:
    """Where the kernel ran: how far it is from the golden too, so a reader sees which one it follows."""
    shared = [n for n in gold if n in outputs and gold[n].shape == outputs[n].shape]
    if shared:
        verdict["kernel_to_golden"] = max(_max_abs(gold[n], outputs[n]) for n in shared)
