"""The status line of a tier run: tier, items done of total, the current kernel and the time left.

On a terminal it is one live line (tqdm, on stderr) and pytest's dots are not printed; elsewhere (a CI log, a
pipe) a plain line at the first item and every LOG_EVERY_S. It runs on the controller: with xdist the workers'
reports reach it through pytest's hooks (pytest_runtest_logstart / pytest_runtest_logreport).

The time left comes only from an earlier complete run of the same tier at the same level: its per-case durations
(results.jsonl's timing.case_wall_s), summed per kernel, from the results dir (the results in place, else
previous/) over parity's cache (durations/<tier>-<level>.json, which every complete run updates). Where a kernel
still to run has no such figure there is no estimate at all, only "n of N items": the first cases of a run are no
guide to the rest (a run of 4.5 min once read "~10 s left" from them). The arithmetic is pure (previous_left_s).
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

from parity.paths import cache_root
from parity.results import Record, ResultsDir, atomic_write_text
from parity.results.dirs import PREVIOUS
from parity.results.files import lenient_records
from parity.run.rundir import complete, run_env

LOG_EVERY_S = 30.0


def kernel_of(nodeid: str) -> str:
    """The kernel of a suite item: its id is `test_x[kernel[case]]` or `test_x[kernel]`."""
    inside = nodeid.partition("[")[2]
    return inside.split("[", 1)[0].rstrip("]") or nodeid.rpartition("::")[2]


def previous_seconds(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Per kernel, the worker seconds its records took last time: timing.case_wall_s and the wait before the item
    (timing.wait_s), which partition a worker's time, summed. Records a run carried over from an older one are not
    its own durations."""
    took: dict[str, float] = {}
    for r in records:
        if r.get("carried_over"):
            continue
        timing = r.get("timing") or {}
        wall, wait = timing.get("case_wall_s"), timing.get("wait_s")
        if isinstance(wall, (int, float)) and r.get("kernel"):
            wall += wait if isinstance(wait, (int, float)) else 0.0
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


def format_left(seconds: float) -> str:
    if seconds <= 0:
        return "finishing"
    if seconds < 90:
        return f"~{max(seconds, 1):.0f} s left"
    if seconds < 5400:
        return f"~{seconds / 60:.0f} min left"
    return f"~{seconds / 3600:.1f} h left"


def status_text(tier: str, done: int, total: int, kernel: str, left_s: float | None) -> str:
    """The line; without an earlier run's figure (left_s None) it says no time at all."""
    eta = "" if left_s is None else f" · {format_left(left_s if done < total else 0.0)}"
    return f"{tier}: {done} of {total} items · {kernel or 'starting'}{eta}"


class StatusLine:
    """The controller's pytest plugin that keeps the status line."""

    def __init__(self, tier: str, previous: Mapping[str, float], workers: int, live: bool,
                 results_dir: Path | None = None, level: str = "") -> None:
        self.tier, self.previous, self.workers, self.live = tier, dict(previous), workers, live
        self.results_dir, self.level = results_dir, level  # where the run's durations are read back at its end
        self.items: Counter[str] = Counter()
        self.done: Counter[str] = Counter()
        self.seen: set[str] = set()
        self.kernel = ""
        self.logged: float | None = None  # a plain line at the first item, so a tier shorter than 30 s shows one too
        self.bar: Any = None
        self.writer: Any = None

    # --- what is to run ---
    def collected(self, nodeids: Sequence[str]) -> None:
        if nodeids and not self.items:  # xdist: the first worker's collection (each collects the same items)
            self.items = Counter(kernel_of(n) for n in nodeids)
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
    def pytest_unconfigure(self) -> None:
        """After the run's results are in place: a complete run's durations go to parity's cache."""
        if self.results_dir is not None:
            remember(self.results_dir, self.tier, self.level)

    def left_s(self) -> float | None:
        return previous_left_s(self.previous, self.items, self.done, self.workers)

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


def previous_records(results_dir: Path) -> list[Record]:
    """The records of results.jsonl in a dir; a line that does not parse is skipped: this only feeds an estimate."""
    return lenient_records(ResultsDir(results_dir).results)


def same_run(results_dir: Path, tier: str, level: str) -> bool:
    """Whether a dir holds a complete run of this tier at this level: only such a run's durations say how long
    this one takes."""
    env = run_env(results_dir)
    return complete(results_dir) and env.get("backend") == tier and env.get("level") == level


def durations_path(tier: str, level: str) -> Path:
    return cache_root() / "durations" / f"{tier}-{level}.json"


def cached_seconds(tier: str, level: str) -> dict[str, float]:
    try:
        took = json.loads(durations_path(tier, level).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in took.items() if isinstance(v, (int, float))} if isinstance(took, dict) else {}


def previous_durations(results_dir: Path, tier: str, level: str) -> dict[str, float]:
    """Per kernel, the worker seconds of the last complete run of this tier and level: parity's cache, overlaid by
    the results dir's own run (the results in place if complete, else previous/)."""
    took = cached_seconds(tier, level)
    for d in (results_dir, results_dir / PREVIOUS):
        if same_run(d, tier, level):
            took.update(previous_seconds(previous_records(d)))
            break
    return took


def remember(results_dir: Path, tier: str, level: str) -> None:
    """Add a complete run's per-kernel durations to parity's cache (an interrupted run's are partial: never)."""
    if not same_run(results_dir, tier, level):
        return
    took = {**cached_seconds(tier, level), **previous_seconds(previous_records(results_dir))}
    path = durations_path(tier, level)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(took, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # a cache that cannot be written costs the next run its estimate, nothing else


def status_line(config: pytest.Config, tier: str, results_dir: Path, level: str, workers: int) -> StatusLine:
    """The plugin for this run: live on a terminal (and not under -v, whose lines it would break), else plain."""
    stream = sys.__stderr__
    live = bool(stream is not None and stream.isatty()) and config.get_verbosity() <= 0
    return StatusLine(tier, previous_durations(results_dir, tier, level), max(workers, 1), live, results_dir, level)
