"""Which case an axis grows from: the largest case that this tier can check at all.

The largest case (the product of the grown dimensions) is the default start. Two kinds of case are passed over,
each with a note on the row, because growing from them says nothing about where the kernel breaks:

- a case the spec marks with a known divergence on this target or tier (a documented compile abort, say): it
  fails for a reason already recorded;
- a case the meta presentation cannot check (a varlen launcher that reads `cu_seqlens`' values): the largest
  case of another kind (another set of parameters, e.g. the dense cases beside the varlen ones) is tried, at most
  MAX_TRIES kinds, and the row says which case was not checked and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import parity.envelope.axes as axes
from parity.envelope.limits import Observation
from parity.spec import Case, KernelSpec

MAX_TRIES = 3  # kinds of case tried before the largest one is grown anyway (and said not checked)


class Observer(Protocol):
    tier: str
    target: str

    def observe(self, spec: KernelSpec, params: Mapping[str, Any]) -> Observation: ...


@dataclass
class Start:
    params: dict[str, Any]  # the case with every axis at its start
    axes: list[axes.Axis]
    notes: list[str] = field(default_factory=list)


def ranked(cases: Sequence[Mapping[str, Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """The largest case of each kind (its set of parameter names), largest first."""
    best: dict[frozenset[str], dict[str, Any]] = {}
    for params in cases:
        try:
            size = axes.base_params([params], names)
        except axes.AxisError:
            continue
        kind = frozenset(size)
        if kind not in best or axes.size_of(size, names) > axes.size_of(best[kind], names):
            best[kind] = size
    return sorted(best.values(), key=lambda p: -axes.size_of(p, names))


def choose(prober: Observer, spec: KernelSpec, grow: Sequence[axes.Axis], names: Sequence[str]) -> Start:
    """The start of `spec`'s axes on this tier; AxisError when no case has the grown dimensions."""
    cases = [c.params for c in spec.cases("full")]
    here = [p for p in cases if not any(spec.divergence_for(b, p) for b in (prober.tier, prober.target))]
    notes: list[str] = []
    if len(here) < len(cases) and here:
        notes.append(f"{len(cases) - len(here)} case(s) with a known divergence on {prober.target} left out")
    axes.base_params(here or cases, names)  # AxisError, with its words, when no case has the dimensions
    starts = []
    for params in ranked(here or cases, names)[:MAX_TRIES]:
        chosen = axes.axes_for(spec.dynamic_args, grow, params)
        starts.append(Start(axes.at_start(params, chosen), chosen, notes))
        if not chosen:
            return starts[-1]
        obs = prober.observe(spec, starts[-1].params)
        if not obs.not_checked:
            return starts[-1]
        notes = [*notes, f"the case {Case(params).id} was not checked on meta tensors: {obs.not_checked[:160]}"]
    return Start(starts[0].params, starts[0].axes, notes)  # none could be checked: the largest, said not checked
