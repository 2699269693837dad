"""One size on one target: the spec's launcher on meta tensors under the compile tier's driver, as an Observation.

Runs in the tier's own venv (upstream triton for CUDA, triton-ascend for Ascend: never both in one process),
through the tier's `compile_case`, so the compile, the specialization and the launcher's grid are exactly the
compile tier's. Triton's cache for these compiles is parity's own (`<cache>/envelope/<tier>/triton`), so a
second envelope is a cache hit; a hit still hands back the stored TTIR, which the offsets are read from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import parity.envelope.memo as memo
import parity.envelope.meta as meta
from parity import settings
from parity.backends import get_backend, tiers_where
from parity.backends.base import Backend
from parity.compile import offsets
from parity.compile.fork import wants_fork
from parity.envelope.limits import Observation
from parity.paths import cache_root
from parity.seams.env import set_triton_env
from parity.spec import Case, KernelSpec
from parity.spec.context import set_current_backend


def wrapped(spec: KernelSpec, launch: meta.Launch) -> KernelSpec:
    """The spec with the envelope's launcher around its own, forked as the spec itself is: the wrapper lives in
    parity, so parity.compile.fork would count it as another package than the kernels' and fork every check (on
    CUDA a fork per check re-pays the first compile's warm-up in each child: 7 s a check, against 0.3 s)."""
    return replace(spec, launch=launch, fork=wants_fork(spec))


class Prober:
    """The compile tier of one target, prepared once per process."""

    def __init__(self, target: str, read_cache: bool = True) -> None:
        tiers = tiers_where(mode="compile", target=target)
        if not tiers:
            raise RuntimeError(f"no compile tier targets {target!r}")
        self.target = target
        settings.configure(no_fit=True, no_perf_advice=True)  # the limits only: no fit search, no tuning advice
        self.backend: Backend = get_backend(tiers[0])
        # as a test run does (parity.plugin): launchers and library adapters ask which tier this process serves
        # (FlagGems' adapter names its vendor and keeps its autotune picks in memory only on a compile tier)
        set_current_backend(self.backend.name)
        self.backend.prepare()
        missing = self.backend.unavailable()
        if missing:
            raise RuntimeError(f"{tiers[0]}: {missing}")
        self.cache_dir = cache_root() / "envelope" / tiers[0] / "triton"
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        set_triton_env(TRITON_CACHE_DIR=str(self.cache_dir))  # for the life of this process
        presented = self.backend.launch_device_type
        if presented is None:
            raise RuntimeError(f"{tiers[0]} presents no device to launches; the envelope needs a tier that does")
        self.device_type: str = presented
        check = self.backend.check
        self.target_name = check.target if check else target  # as the verdict's column names it
        self.tier = tiers[0]
        self.memo = memo.Memo(cache_root() / "envelope" / "answers" / tiers[0], read=read_cache)
        # this run's own checks, by spec and params: read again without counting as answers of an earlier run
        self.made: dict[tuple[str, str], Observation] = {}

    def _run(self, spec: KernelSpec, params: Mapping[str, Any], launch: meta.Launch) -> tuple[Observation, list[Any]]:
        obs = Observation(self.target, dict(params))
        try:
            inputs = meta.meta_inputs(spec.make_inputs, params, self.device_type)
        except meta.NeedsData as exc:
            obs.not_checked = str(exc)
            return obs, []
        outputs: dict[str, Any] = {}

        def launched(ins: Mapping[str, Any], p: Any) -> Any:
            out = launch(ins, p)
            outputs.update(out if isinstance(out, Mapping) else {})
            return out

        try:
            records = self.backend.compile_case(wrapped(spec, launched), Case(dict(params)), inputs)
        except Exception as exc:  # a forked case (a library's) hands its error back as text: judge by the words
            text = str(exc)
            if isinstance(exc, meta.NeedsData) or meta.presentation_failed(text):
                obs.not_checked = text.splitlines()[0][:300]
            else:  # the launcher's own refusal (an assert on a size, a numel check): a limit at this size
                obs.launch_errors.append([spec.name, f"the launcher raised {type(exc).__name__}: {text[:300]}"])
            return obs, []
        obs.numels = {**meta.numels(inputs), **meta.numels(outputs)}
        return obs, records

    def observe(self, spec: KernelSpec, params: Mapping[str, Any]) -> Observation:
        """What the tier said about `params`: stored from an earlier check of the same code (parity.envelope.memo),
        else a compile and launch here."""
        here = (spec.name, json.dumps(dict(params), sort_keys=True, default=repr))
        if here in self.made:  # checked earlier in this run (the start's check, then the search's first)
            return replace(self.made[here])
        k = memo.key(spec, self.tier, self.target, "observe", {"params": dict(params)})
        stored = memo.load(self.memo.get(k))
        if stored is not None:
            return stored
        obs = self._observe(spec, params)
        if memo.storable(obs):
            self.memo.put(k, memo.dump(obs))
            self.made[here] = replace(obs)
        return obs

    def _observe(self, spec: KernelSpec, params: Mapping[str, Any]) -> Observation:
        """Compile and launch at `params` (meta tensors), and what the tier said about it."""
        obs, records = self._run(spec, params, meta.meta_launch(spec.launch, self.device_type))
        for r in records:
            if r.get("grid"):
                obs.grids.append([r["kernel"], [int(g) for g in r["grid"]]])
            if r.get("launch_error") and meta.presentation_failed(str(r["launch_error"])):
                obs.not_checked = obs.not_checked or str(r["launch_error"]).splitlines()[0][:300]
            elif r.get("launch_error"):
                obs.launch_errors.append([r["kernel"], str(r["launch_error"])])
            if not r.get("ok") and (r.get("error_kind") or not r.get("launch_error")):
                kind = str(r.get("error_kind") or "error")
                obs.compile_errors.append([r["kernel"], kind, str(r.get("message") or "")])
        if obs.not_checked is None and not records:
            obs.not_checked = "the launch compiled nothing"
        obs.offsets = offsets.widest(r.get("offsets") for r in records)
        return obs

    def compiles_over(self, spec: KernelSpec, params: Mapping[str, Any], axis: str, sizes: Sequence[int]) -> int | None:
        """How many compiles the JIT starts for launches at `sizes` in one process (one per specialization); None
        when a size cannot be launched without data. Stored as observe's answers are; a failed count is not."""
        k = memo.key(spec, self.tier, self.target, "compiles", {"params": dict(params), "axis": axis,
                                                                 "sizes": list(sizes)})
        stored = self.memo.get(k)
        if isinstance(stored, int):
            return stored
        count = self._compiles_over(spec, params, axis, sizes)
        if count is not None:
            self.memo.put(k, count)
        return count

    def _compiles_over(self, spec: KernelSpec, params: Mapping[str, Any], axis: str,
                       sizes: Sequence[int]) -> int | None:
        device_type, launch = self.device_type, meta.meta_launch(spec.launch, self.device_type)

        def every_size(ins: Mapping[str, Any], p: Any) -> Any:
            out = None
            for size in sizes:
                grown = {**p, axis: size}
                out = launch(meta.meta_inputs(spec.make_inputs, grown, device_type), grown)
            return out

        try:
            records = self.backend.compile_case(wrapped(spec, every_size), Case(dict(params)),
                                                meta.meta_inputs(spec.make_inputs, params, device_type))
        except Exception:  # a value read, or any failure of the three launches: the count is not checked
            return None
        if any(r.get("launch_error") for r in records):
            # a launch that failed (a refused option, a grid, the launcher's own raise) is a record, not a compile,
            # and the sizes after it may never have launched; a config that failed to compile is still a compile
            return None
        kernels = [r["kernel"] for r in records]
        return max((kernels.count(k) for k in set(kernels)), default=0)  # the kernel compiled most often

