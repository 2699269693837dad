"""The small interface every backend implements; run tiers share everything else."""

from __future__ import annotations

import importlib.metadata
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from parity.backends.trackers import UPSTREAM, Tracker


def dist_version(dist: str) -> str | None:
    """The installed version of a distribution ("triton-ascend", "pybind11"), or None where it is not installed."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Check:
    """What one tier checks, as the verdict names it."""

    target: str  # the column it belongs to: a vendor's stack, "NVIDIA (Triton)"
    name: str  # what the cell's word checked, with {arch} / {device} filled from env.json
    order: int  # position inside the target's cell
    short: str = ""  # the cell's word for it (whether it runs on the hardware itself: Backend.hardware)


class Backend:
    """One place a kernel can run (or be compiled). Subclasses override what differs."""

    name: ClassVar[str] = ""
    mode: ClassVar[str] = "run"  # run | compile | interpret
    device_type: ClassVar[str] = "cpu"
    # a hardware session turns a missing device or package into an error, not a skip
    hardware: ClassVar[bool] = False
    # the command a user without this device should run instead
    fallback_hint: ClassVar[str] = "nox -s interpret"
    # whether the perf pass may time kernels here by default (not where a run is no measure of speed)
    times_kernels: ClassVar[bool] = True
    # what a pass on this backend does (and does not) show, where that is narrower than "it runs right here"
    scope: ClassVar[str | None] = None
    # suite functions this backend does not collect (names such as "test_specialization")
    excluded_tests: ClassVar[tuple[str, ...]] = ()

    # Facets: what the rest of the engine asks instead of comparing backend names.
    # the device family a launcher takes the path of here ("cuda", "ascend"); None under the interpreter
    target: ClassVar[str | None] = None
    # what a pass here checks: "numerics" (outputs vs fp64), "vendor-compiler" (the vendor's compiler
    # accepts the kernel), "lowering" (the vendor's lowering, run elsewhere)
    verifies: ClassVar[frozenset[str]] = frozenset({"numerics"})
    # the compiler family whose tracker a vendor draft from here goes to first (parity.backends.trackers)
    tracker: ClassVar[Tracker] = UPSTREAM
    # the torch device module libraries find here at import ("cuda": torch.cuda names a GPU, "npu"); a
    # library's adapter prepares for it (parity.spec.library)
    presents: ClassVar[str | None] = None

    # Its place in the verdict (parity.report.verdict): the column its check sits in, that check's position
    # and word in the column's cell, and what the word checked; None: a column of its own, named after the tier
    check: ClassVar[Check | None] = None
    # the place of its results dir among DIVERGENCE.md's columns, lowest first; None: after every ranked one
    report_rank: ClassVar[int | None] = None
    # a hardware tier's check in words, as the verdict says what stays unchecked without its results dir
    device_check: ClassVar[str | None] = None
    # the command a repro's run line starts with here (the interpreter's environment variable)
    repro_prefix: ClassVar[str] = ""
    # the upstream language whose rules (parity.triage.limits) a kernel built here must respect: "triton" or
    # "triton-ascend"; None: none of them (a tier that compiles with neither)
    language: ClassVar[str | None] = None
    # the ids of parity.triage.limits' tier limits that are this tier's own defects (its interpreter's, its
    # host toolchain's, its device's arithmetic): triage applies each to a record of this tier only
    own_limits: ClassVar[tuple[str, ...]] = ()
    # triton's GPUTarget fields for a target this tier names, when a repro must rebuild for it (the
    # launch-option repro); the arch chosen stands in for the default where the record has one
    gpu_target: ClassVar[tuple[str, Any, int] | None] = None

    # Compile backends' interface (mode "compile"); the defaults are what a run backend has.
    # the device type launches see (parity.compile.device_tensors); None: the backend's own device_type
    launch_device_type: ClassVar[str | None] = None
    # the template (parity/repro/templates/) a failing compile's standalone repro is written from
    repro_template: ClassVar[str | None] = None
    # the files a repro dir gets beyond repro.py and its drafts, by the name of their writer in
    # parity.repro.run_repro.EXTRAS ("lowered": the captured modules and a rebuild-and-run script)
    repro_extras: ClassVar[str | None] = None
    # the pytest option whose value the plugin copies into `arch` before prepare() (--cuda-arch, ...)
    arch_option: ClassVar[str | None] = None
    # the target the backend compiles for (an SM number, an Ascend arch name); None on a run backend
    arch: Any = None
    # the tiers that compute, in order of preference, that prove a compile tier's fit advice by running it
    # against fp64 (parity.run.fit_proof): the first one `installed()` here is used
    proves_on: ClassVar[tuple[str, ...]] = ()
    # A hardware-free tier's place on this machine (`parity check`, noxfile.py): the nox venv under .nox/ whose python
    # runs it (tiers on one stack share one: upstream triton and triton-ascend both install `triton`), and what its
    # pytest process needs in its environment. None: a hardware tier, run in its own session
    venv: ClassVar[str | None] = None
    # what building that venv asks of the python that runs nox, where it asks more than parity does
    venv_note: ClassVar[str] = ""
    process_env: ClassVar[dict[str, str]] = {}

    @classmethod
    def host_missing(cls) -> str | None:
        """What this machine lacks outside any venv to run the tier (host tools), with the command that installs it;
        checked from any python, before the tier's own venv is used."""
        return None

    @classmethod
    def installed(cls) -> str | None:
        """Why this tier cannot run in this environment (checked without preparing it), or None."""
        return None

    def __init__(self) -> None:
        self.device_index = 0

    def prepare(self) -> None:
        """Environment set-up that must happen before triton is imported."""

    def unavailable(self) -> str | None:
        """None when usable here; otherwise what is missing and the command that provides it."""
        return None

    def select_device(self, worker_index: int) -> None:
        """Pin this process to one device: worker i gets device i mod N."""

    def compare_device(self, numel: int) -> str:
        """Where comparing an output of `numel` elements does its fp64 arithmetic."""
        return "cpu"

    @property
    def device(self) -> str:
        return self.device_type if self.device_type == "cpu" else f"{self.device_type}:{self.device_index}"

    def synchronize(self) -> None:
        """Wait for queued work; a no-op on the CPU."""

    def release_memory(self) -> None:
        """Give the device the memory torch's allocator keeps cached (the run's other workers share it)."""

    def time_ms(self, fn: Callable[[], Any]) -> float:
        """Median wall time of fn in milliseconds; run tiers override with device timers."""
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            self.synchronize()
            samples.append((time.perf_counter() - t0) * 1e3)
        return sorted(samples)[len(samples) // 2]

    def memory_gib(self) -> float | None:
        """Memory of the device cases run on; None where there is no device (CPU tiers)."""
        return None

    def env(self) -> dict[str, Any]:
        """Versions and device facts for env.json."""
        return {}

    def device_name(self) -> str | None:
        """The name perf peaks are looked up by (parity.perf.figures.PEAKS)."""
        return None

    def to_device(self, t: torch.Tensor) -> torch.Tensor:
        return t.to(self.device)

    def compile_case(self, spec: Any, case: Any, cpu_inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        """A compile backend's verdict on one case: one dict per compile its launch triggered."""
        raise NotImplementedError(f"backend {self.name!r} compiles nothing on its own: it runs kernels")

    def presented(self) -> AbstractContextManager[Callable[[Mapping[str, Any]], dict[str, Any]]]:
        """Around a launch: the device libraries are shown (ascend-lowered: an NPU); yields what moves the
        inputs onto it. Here, nothing: the inputs stay as they are."""
        return nullcontext(dict)
