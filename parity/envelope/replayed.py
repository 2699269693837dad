"""`parity envelope --replay BUNDLE`: a recording's kernels grown along the axes their launches vary in.

Per recorded kernel the axes come from its kept launches (parity.envelope.replay_axes); each grows from the largest
recorded launch to the production maximum by the same search and limits as a spec's (parity.envelope.growth,
.limits), every check one compile and launch of the compile tier on meta buffers: the recorded launch with its
shapes, strides, offsets, integer arguments and grid set to their values at that size, its other arguments as
recorded. The int32 figure is each tensor argument's last element offset (its offset plus (shape - 1)·stride per
dim), read from the grown launch itself.

Launches the recording saw but did not keep share a kept launch's shapes (the dedupe key holds every shape and
integer), so the kept ones give every size seen; a key none of whose launches was kept (the budget stopped the
recording) is said to be unknown.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch

import parity.envelope.growth as growth
import parity.envelope.limits as limits
import parity.envelope.replay_axes as replay_axes
import parity.envelope.storm as storms
from parity.envelope.probe import Prober
from parity.record import replay
from parity.record.bundle import Bundle, load_bundle
from parity.spec import Case, KernelSpec
from parity.spec.library import adapt_imports

CHECKED_NO_GRID = "on-chip memory, int32 offsets, launcher"


class OutOfTime(RuntimeError):
    """An axis search past its budget: said "not checked", never a pass."""


def _last_offset(view: Mapping[str, Any]) -> int:
    if any(n == 0 for n in view["shape"]):
        return int(view["offset"]) - 1
    return int(view["offset"]) + sum(int(n - 1) * int(st) for n, st in zip(view["shape"], view["stride"], strict=True))


def spans(entry: Mapping[str, Any]) -> dict[str, int]:
    """Per tensor argument, its last element offset + 1: the figure its pointer offsets reach (a dense tensor's
    element count; a strided view is named as a span, since it holds fewer elements than that)."""
    out = {}
    for name, value in replay_axes.named_args(entry):
        if "tensor" in value:
            view = entry["views"][value["tensor"]]
            span = _last_offset(view) + 1
            dense = span == int(view["offset"]) + torch.Size(view["shape"]).numel()
            out[name if dense else f"{name}'s span (last offset + 1)"] = span
    return out


def buffer_bytes(entry: Mapping[str, Any]) -> dict[str, int]:
    """Each buffer's size in bytes that holds every grown view over it."""
    out = {b: 1 for b in entry["buffers"]}
    for view in entry["views"].values():
        size = (_last_offset(view) + 1) * replay.torch_dtype(view["dtype"]).itemsize
        out[view["buffer"]] = max(out[view["buffer"]], size)
    return out


def grown_spec(spec: KernelSpec, entries: Sequence[Mapping[str, Any]], axis: replay_axes.ReplayAxis) -> KernelSpec:
    """The recorded kernel as a spec whose one parameter is the axis' size: the base launch with every fitted
    member at that size, on meta buffers (make_inputs runs under torch's meta device in parity.envelope.meta)."""
    base = entries[axis.base]
    names = [p[0] for p in base["kernel"].get("params") or []]

    def entry_at(p: Mapping[str, Any]) -> dict[str, Any]:
        values, why = axis.values_at(int(p[axis.name]))
        if why:  # checked before any launch (ReplayProbe.observe); never a launch of a guessed shape
            raise replay.NotReplayable(why)
        return replay_axes.grown_entry(base, values)

    def make_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
        return {b: torch.empty(n, dtype=torch.uint8) for b, n in buffer_bytes(entry_at(p)).items()}

    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        entry = entry_at(p)
        return replay.launch_entry(spec.kernel, entry, inputs, replay.output_names(entry, names))

    case = Case({axis.name: axis.low})
    return dataclasses.replace(spec, make_inputs=make_inputs, launch=launch, cases=lambda level: [case],
                               compile_signature=lambda level: [case])


class ReplayProbe:
    """A Prober's checks of a grown launch: the figures it reads from the launch itself, and the sizes at which
    the recording does not say what the launch would be."""

    def __init__(self, prober: Prober, spec: KernelSpec, entries: Sequence[Mapping[str, Any]],
                 axis: replay_axes.ReplayAxis) -> None:
        self.prober, self.axis, self.base = prober, axis, entries[axis.base]
        self.spec = grown_spec(spec, entries, axis)

    def observe(self, size: int) -> limits.Observation:
        params = {self.axis.name: size}
        values, why = self.axis.values_at(size)
        if why:
            return limits.Observation(self.prober.target, params, not_checked=why)
        obs = self.prober.observe(self.spec, params)
        obs.numels = spans(replay_axes.grown_entry(self.base, values))  # elements, not the buffers' bytes
        return obs


def grow_one(prober: Prober, spec: KernelSpec, entries: Sequence[Mapping[str, Any]], axis: replay_axes.ReplayAxis,
             budget_s: float) -> dict[str, Any]:
    """One axis of one recorded kernel on one target: the row `parity envelope` renders, as tier.grow_one's."""
    started = time.monotonic()
    head = {"kernel": spec.name, "target": prober.target, "target_name": prober.target_name}
    probe = ReplayProbe(prober, spec, entries, axis)

    def check(size: int) -> tuple[bool, limits.Observation]:
        if time.monotonic() - started > budget_s:
            raise OutOfTime(f"the search passed its {budget_s:g} s budget before {axis.name} = {size:,}")
        obs = probe.observe(size)
        return bool(obs.not_checked or limits.crossings(obs)), obs

    try:
        found = growth.search(check, axis.low, axis.high, limits.guess)
    except OutOfTime as exc:
        return {**head, "skipped": f"{axis.name}: not checked: {exc}"}
    sizes = storms.sizes(axis.low, axis.high)
    storm: dict[str, Any] = {"sizes": sizes}
    why = storms.not_counted(axis.name, axis.low, axis.high, sizes, found.last_ok is not None)
    if why:
        storm.update(compiles=None, why=why)
    elif all(axis.values_at(s)[1] is None for s in sizes):
        start = {axis.name: axis.low}
        storm.update(compiles=prober.compiles_over(probe.spec, start, axis.name, sizes),
                     at_one=prober.compiles_over(probe.spec, start, axis.name, sizes[:1]))
    else:
        storm.update(compiles=None, why="the recording does not say the launch at these sizes")
    base = entries[axis.base]
    config = replay_axes.config_names(base)
    followers = [m for m, models in axis.fits.items() if m in config and any(x.kind != "const" for x in models)]
    if followers:  # the recompiles come from these constexprs, which the axis (a tensor dim, say) carries along
        storm["advice"] = (f"{', '.join(followers)} follow {axis.name} as constexprs: pass them as plain arguments "
                           "(do_not_specialize), or bound them to a fixed tile")
    return {**head, "axis": {"name": axis.name, "low": axis.low, "high": axis.high},
            "params": {"launch": base["id"]}, "members": axis.described(),
            "checked": CHECKED_NO_GRID if axis.grid_unknown else None, "grid_unknown": axis.grid_unknown,
            "last_ok": found.last_ok, "first_bad": found.first_bad,
            "ok_probe": dataclasses.asdict(found.ok_probe) if found.ok_probe else None,
            "bad_probe": dataclasses.asdict(found.bad_probe) if found.bad_probe else None,
            "crossings": [dataclasses.asdict(c) for c in limits.crossings(found.bad_probe)] if found.bad_probe else [],
            "probes": found.sizes, "storm": storm, "seconds": round(time.monotonic() - started, 2)}


def unkept(bundle: Bundle, kernel_id: str) -> list[str]:
    """What the recording saw of this kernel but did not keep: keys none of whose launches was kept, launches that
    could not be recorded. Their sizes are not in the bundle, so the axes are read without them."""
    lost = sum(1 for c in bundle.counts for k in (c.get("keys") or {}).values()
               if k.get("kernel_id") == kernel_id and k.get("seen") and not k.get("kept"))
    failed = [u.get("reason", "?") for u in bundle.unrecorded if (u.get("kernel") or {}).get("id") == kernel_id]
    notes = [f"{lost} launch shape(s) seen but none kept (the recording stopped keeping launches): their sizes "
             "are not in the bundle"] if lost else []
    if failed:
        notes.append(f"{len(failed)} launch(es) could not be recorded ({failed[0][:120]}): their sizes are not in "
                     "the bundle")
    return notes


def axes_of(entries: Sequence[Mapping[str, Any]], grow: Sequence[replay_axes.GrowTerm]) -> replay_axes.KernelAxes:
    """The inferred axes, narrowed or extended by --grow: a term whose first member is an inferred axis' member sets
    that axis' range; one on a member no axis holds declares an axis of its own; a kernel no term names keeps its
    inferred axes."""
    found = replay_axes.infer(entries)
    if not grow:
        return found
    chosen = []
    for term in grow:
        axis = next((a for a in found.axes if term.members[0] in a.fits), None)
        if axis is not None:
            chosen.append(dataclasses.replace(axis, low=term.low or axis.low, high=term.high))
        elif term.members[0] in replay_axes.members(entries[0]):
            chosen.append(replay_axes.declared(entries, term))
    return replay_axes.KernelAxes(chosen, None, found.notes) if chosen else found  # no term of its: its own axes


def envelope(prober: Prober, bundle_path: str, requested: Sequence[str], grow: Sequence[replay_axes.GrowTerm],
             budget_s: float) -> Iterator[dict[str, Any]]:
    """The rows of every recorded kernel (narrowed by names or modules), one axis at a time."""
    adapt_imports()  # a recorded library's kernels import with its adapter, as replay does
    bundle = load_bundle(bundle_path)
    groups = replay.kernel_groups(bundle)
    known = {name for name, _ in groups.values()} | {e[0]["kernel"].get("module", "?") for _, e in groups.values()}
    for unknown in (r for r in requested if r not in known):
        yield {"kernel": unknown, "target": prober.target, "target_name": prober.target_name,
               "skipped": f"no kernel or module of that name was recorded in {bundle_path} (recorded: "
                          f"{', '.join(sorted(n for n, _ in groups.values()))})"}
    for kernel_id, (name, entries) in groups.items():
        module = entries[0]["kernel"].get("module", "?")
        if requested and not {name, module} & set(requested):
            continue
        head = {"kernel": name, "target": prober.target, "target_name": prober.target_name}
        spec = replay.kernel_spec(bundle, entries, name)
        missing = spec.unavailable() if spec.unavailable else None
        if missing:
            yield {**head, "skipped": missing}
            continue
        found = axes_of(entries, grow)
        notes = [*unkept(bundle, kernel_id), *found.notes]
        if not found.axes:
            yield {**head, "skipped": found.none_why or "no axis to grow", "notes": notes}
            continue
        for axis in found.axes:
            if axis.blocked:
                yield {**head, "skipped": f"{axis.name}: not checked: {axis.blocked}", "notes": notes}
                continue
            yield {**grow_one(prober, spec, entries, axis, budget_s), "notes": notes}
