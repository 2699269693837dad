"""Wall-clock phases of one parity session, for REPORT.md's "Where the time went".

The per-case timings add up work inside the workers; these say where the session's own wall time
went, from the process start to the report: start-up and library imports before pytest collects,
worker start, the accuracy pass, the perf pass and writing the results. Stamps are epoch seconds
(time.time()), the clock pytest stamps its reports with (TestReport.start / .stop).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

# (label, from stamp, to stamp), in session order
PHASES = (
    ("start-up: interpreter, torch, pytest plugins", "process", "configure"),
    ("configure: backend, kernel and library imports", "configure", "configured"),
    ("collection and worker start (to the first item)", "configured", "first_item"),
    ("accuracy pass (first item start to last item end)", "first_item", "last_item"),
    ("after the last item (xdist shutdown)", "last_item", "finish"),
    ("perf pass", "finish", "perf_done"),
    ("results, env probe and report", "perf_done", "report"),
)


def process_start() -> float | None:
    """When this process started (epoch seconds), from /proc on Linux; None elsewhere."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, after the command name
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return time.time() - uptime + start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class SessionClock:
    stamps: dict[str, float] = field(default_factory=dict)

    def stamp(self, name: str, at: float | None = None) -> None:
        self.stamps[name] = time.time() if at is None else at

    def item(self, start: float, stop: float) -> None:
        """One test report's span: the accuracy pass runs from the first start to the last stop. A report
        with no span (xdist's report of a crashed item has start = stop = 0) says nothing about when."""
        if not (start > 0 and stop >= start):
            return
        self.stamps["first_item"] = min(start, self.stamps.get("first_item", start))
        self.stamps["last_item"] = max(stop, self.stamps.get("last_item", stop))

    def phases(self) -> dict[str, float]:
        """label -> seconds, for the phases whose two ends were stamped in order (a phase whose end precedes
        its start has no true length: it is left out rather than printed negative)."""
        s = self.stamps
        return {label: round(s[b] - s[a], 2) for label, a, b in PHASES if a in s and b in s and s[b] >= s[a]}


class ItemSpans:
    """A controller's pytest plugin: each test report's span to the session clock (it sees the workers' too)."""

    def __init__(self, clock: SessionClock) -> None:
        self.clock = clock

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.clock.item(report.start, report.stop)
