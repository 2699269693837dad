"""The status line of a tier run: tier, items done/total, the current kernel and the time left.

On a terminal it is one live line (tqdm, on stderr) and pytest's dots are not printed; elsewhere (a CI log, a
pipe) a plain line at the first item and every LOG_EVERY_S. It runs on the controller: with xdist the workers'
reports reach it through pytest's hooks (pytest_runtest_logstart / pytest_runtest_logreport). The time left
blends the run's own pace with the previous run's durations in the results dir (results.jsonl's
timing.case_wall_s, per kernel): the previous run rules at the start, the run's own pace by the end. The
arithmetic is pure (estimate_left_s, previous_left_s).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Generator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

LOG_EVERY_S = 30.0


def kernel_of(nodeid: str) -> str:
    """The kernel of a suite item: its id is `test_x[kernel[case]]` or `test_x[kernel]`."""
    inside = nodeid.partition("[")[2]
    return inside.split("[", 1)[0].rstrip("]") or nodeid.rpartition("::")[2]


def previous_seconds(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Per kernel, the worker seconds its records took last time (timing.case_wall_s summed)."""
    took: dict[str, float] = {}
    for r in records:
        wall = (r.get("timing") or {}).get("case_wall_s")
        if isinstance(wall, (int, float)) and r.get("kernel"):
            took[r["kernel"]] = took.get(r["kernel"], 0.0) + float(wall)
    return took


def previous_left_s(previous: Mapping[str, float], items: Mapping[str, int], done: Mapping[str, int],
                    workers: int) -> float | None:
    """What the items left would take by the previous run's pace: each kernel's previous seconds times the share of
    its items still to run, over the workers. None when a kernel still to run has no previous time."""
    left = 0.0
    for kernel, n in items.items():
        share = (n - done.get(kernel, 0)) / n if n else 0.0
        if share <= 0:
            continue
        if kernel not in previous:
            return None
        left += previous[kernel] * share
    return left / max(workers, 1)


def estimate_left_s(elapsed_s: float, done: int, total: int, previous_left: float | None) -> float | None:
    """Seconds left: the run's own pace (elapsed per item done) weighted by the share done, the previous run's
    figure by the share left; either alone where the other is missing; None when nothing is known yet."""
    if total <= 0 or done >= total:
        return 0.0
    own = elapsed_s / done * (total - done) if done > 0 else None
    if own is None:
        return previous_left
    if previous_left is None:
        return own
    weight = done / total
    return weight * own + (1 - weight) * previous_left


def format_left(seconds: float | None) -> str:
    if seconds is None:
        return "time left unknown yet"
    if seconds <= 0:
        return "finishing"
    if seconds < 90:
        return f"~{max(seconds, 1):.0f} s left"
    if seconds < 5400:
        return f"~{seconds / 60:.0f} min left"
    return f"~{seconds / 3600:.1f} h left"


def status_text(tier: str, done: int, total: int, kernel: str, left_s: float | None) -> str:
    return f"{tier}: {done}/{total} items · {kernel or 'starting'} · {format_left(left_s)}"


class StatusLine:
    """The controller's pytest plugin that keeps the status line."""

    def __init__(self, tier: str, previous: Mapping[str, float], workers: int, live: bool) -> None:
        self.tier, self.previous, self.workers, self.live = tier, dict(previous), workers, live
        self.items: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.seen: set[str] = set()
        self.kernel = ""
        self.started = time.monotonic()
        self.logged: float | None = None  # a plain line at the first item, so a tier shorter than 30 s shows one too
        self.bar: Any = None
        self.writer: Any = None

    # --- what is to run ---
    def collected(self, nodeids: Sequence[str]) -> None:
        if nodeids and not self.items:  # xdist: the first worker's collection (each collects the same items)
            self.items = Counter(kernel_of(n) for n in nodeids)
            self.started = time.monotonic()
            self.open()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not getattr(session.config, "workerinput", None):
            self.collected([i.nodeid for i in session.items])
            self.writer = session.config.pluginmanager.get_plugin("terminalreporter")

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        self.collected(ids)

    # --- what runs ---
    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.kernel = kernel_of(nodeid)
        self.show()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown" and report.nodeid not in self.seen:
            self.seen.add(report.nodeid)
            self.done[kernel_of(report.nodeid)] += 1
            self.show()

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: Any, config: pytest.Config) -> Generator[None, Any, Any]:
        """On a terminal the live line replaces pytest's dots (the summary still lists every failure)."""
        result = yield
        if self.live and isinstance(result, tuple) and len(result) == 3 and isinstance(result[1], str):
            return (result[0], "", result[2])
        return result

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.close()

    # --- the line ---
    def left_s(self) -> float | None:
        done, total = sum(self.done.values()), sum(self.items.values())
        return estimate_left_s(time.monotonic() - self.started, done, total,
                               previous_left_s(self.previous, self.items, self.done, self.workers))

    def text(self) -> str:
        return status_text(self.tier, sum(self.done.values()), sum(self.items.values()), self.kernel, self.left_s())

    def open(self) -> None:
        if not self.live:
            return
        try:
            from tqdm import tqdm  # optional at run time: without it the plain line every LOG_EVERY_S stays
        except ImportError:
            self.live = False
            return
        self.bar = tqdm(total=sum(self.items.values()), file=sys.__stderr__, leave=False, dynamic_ncols=True,
                        bar_format="{desc} {bar:12}", desc=self.text())

    def show(self) -> None:
        if self.bar is not None:
            self.bar.n = sum(self.done.values())
            self.bar.set_description_str(self.text(), refresh=True)
            return
        now = time.monotonic()
        if self.items and (self.logged is None or now - self.logged >= LOG_EVERY_S):
            self.logged = now
            line = f"parity: {self.text()}"
            if self.writer is not None:
                # under xdist pytest's dots leave the line open and write_line does not close it (its
                # ensure_newline looks at the file being run, which xdist never sets): close it first
                if getattr(getattr(self.writer, "_tw", None), "width_of_current_line", 0):
                    self.writer.write("\n")
                self.writer.write_line(line)
            else:
                print(line, file=sys.__stderr__, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def previous_records(results_dir: Path) -> list[dict[str, Any]]:
    """The last complete run's records in the results dir (still in place while this run stages its own); a line
    that does not parse is skipped: this only feeds an estimate."""
    records = []
    try:
        lines = (results_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def status_line(config: pytest.Config, tier: str, previous_records: Iterable[Mapping[str, Any]],
                workers: int) -> StatusLine:
    """The plugin for this run: live on a terminal (and not under -v, whose lines it would break), else plain."""
    stream = sys.__stderr__
    live = bool(stream is not None and stream.isatty()) and config.get_verbosity() <= 0
    return StatusLine(tier, previous_seconds(previous_records), max(workers, 1), live)
