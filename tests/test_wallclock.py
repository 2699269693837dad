"""The session's wall-clock phases: stamped in order, spans of the test items, shown in REPORT.md."""

from __future__ import annotations

import time

from parity.report.backend_md import render_report
from parity.run.wallclock import PHASES, SessionClock, process_start


def test_the_process_started_before_now():
    started = process_start()
    assert started is None or time.time() - 86400 * 30 < started <= time.time()


def test_phases_follow_the_stamps_and_the_items_span_first_start_to_last_stop():
    clock = SessionClock()
    for name, at in (("process", 100.0), ("configure", 103.0), ("configured", 110.0)):
        clock.stamp(name, at)
    clock.item(115.0, 120.0)
    clock.item(112.0, 118.0)  # xdist: reports come in any order
    clock.item(130.0, 190.0)
    for name, at in (("finish", 192.0), ("perf_done", 250.0), ("report", 251.5)):
        clock.stamp(name, at)
    phases = clock.phases()
    assert list(phases) == [label for label, _, _ in PHASES]
    assert list(phases.values()) == [3.0, 7.0, 2.0, 78.0, 2.0, 58.0, 1.5]
    assert sum(phases.values()) == 151.5  # the phases partition process start to report


def test_an_unstamped_phase_is_left_out_and_the_report_shows_the_rest():
    clock = SessionClock()
    clock.stamp("configure", 0.0)
    clock.stamp("configured", 4.0)  # no process start (not Linux): the start-up row is missing
    phases = clock.phases()
    assert phases == {"configure: backend, kernel and library imports": 4.0}
    text = render_report([], {"backend": "interpret", "wall_phases": phases})
    assert "## Where the time went" in text and "| configure: backend, kernel and library imports |" in text
    assert "total, process start to report" in text
