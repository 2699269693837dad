"""What a spec may say about its speed: the peer it is timed beside and the goal REPORT.md prints.

Both are optional data on a KernelSpec (`peer`, `perf_target`); a spec without them is still timed.
Goals are printed as met or missed, never asserted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

BOUNDS = ("memory", "compute")


@dataclass(frozen=True)
class Peer:
    """The same op in the library a kernel family comes from (e.g. fla for the GDN kernels).

    `prepare(inputs_on_device, params)` returns the thunk the perf pass times, so conversions and
    index building happen outside the timed region. `unavailable()` says why it cannot run here
    (e.g. "fla-core is not installed; `pip install fla-core==0.6.0`"), or None.
    """

    library: str
    prepare: Callable[[Mapping[str, Any], Mapping[str, Any]], Callable[[], Any]]
    unavailable: Callable[[], str | None] = lambda: None
    # imports what `prepare` needs (fla's GDN ops take seconds to import), so a run with xdist workers can load
    # it in the controller while the workers run the accuracy pass, not at the perf pass's first peer
    preload: Callable[[], Any] | None = None


@dataclass(frozen=True)
class PerfTarget:
    """A speed goal, printed in REPORT.md as met or missed with the figure; give exactly one bound.

    - min_roofline_frac: the kernel reaches at least this fraction of the machine's measured roof
      (copy bandwidth for memory-bound kernels, torch.matmul's bf16 rate for compute-bound ones);
    - min_speedup_vs_baseline: baseline_ms / ms is at least this (1.0: as fast as torch);
    - max_time_vs_peer: ms / peer_ms is at most this (0.8: takes at most 80 % of the peer's time).
    """

    min_roofline_frac: float | None = None
    min_speedup_vs_baseline: float | None = None
    max_time_vs_peer: float | None = None
    why: str = ""  # where the goal comes from (an issue, a user's number)

    def __post_init__(self) -> None:
        given = [v for v in (self.min_roofline_frac, self.min_speedup_vs_baseline, self.max_time_vs_peer)
                 if v is not None]
        if len(given) != 1 or given[0] <= 0:
            raise ValueError("PerfTarget: give exactly one positive bound: min_roofline_frac, "
                             "min_speedup_vs_baseline or max_time_vs_peer")

    def as_dict(self) -> dict[str, Any]:
        return {"min_roofline_frac": self.min_roofline_frac, "min_speedup_vs_baseline": self.min_speedup_vs_baseline,
                "max_time_vs_peer": self.max_time_vs_peer, "why": self.why or None}
