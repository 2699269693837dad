"""The status line's arithmetic (pure) and its two faces: a live line on a terminal, a plain line every 30 s."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from parity import progress


def test_the_kernel_of_an_item_is_read_from_its_id():
    assert progress.kernel_of("suites/test_compile.py::test_compile[vector_add[N=1,dtype=fp16]]") == "vector_add"
    assert progress.kernel_of("suites/test_compile.py::test_variants[user_l2norm_rows]") == "user_l2norm_rows"


def test_previous_durations_are_summed_per_kernel_and_odd_records_ignored():
    records = [{"kernel": "a", "timing": {"case_wall_s": 2.0}}, {"kernel": "a", "timing": {"case_wall_s": 1.0}},
               {"kernel": "b", "timing": None}, {"kernel": "c"}, {"timing": {"case_wall_s": 5}}]
    assert progress.previous_seconds(records) == {"a": 3.0}


def test_with_no_previous_run_the_estimate_is_the_runs_own_pace_and_unknown_before_the_first_item():
    assert progress.estimate_left_s(0.0, 0, 10, None) is None
    assert progress.estimate_left_s(20.0, 2, 10, None) == pytest.approx(80.0)
    assert progress.format_left(None) == "time left unknown yet"


def test_the_previous_run_rules_at_the_start_and_the_runs_pace_by_the_end():
    assert progress.estimate_left_s(0.0, 0, 10, 50.0) == 50.0
    # a quarter done at twice the previous pace: 3/4 of the previous figure, 1/4 of the run's own
    left = progress.estimate_left_s(10.0, 1, 4, 60.0)
    assert left == pytest.approx(0.25 * 30.0 + 0.75 * 60.0)
    assert progress.estimate_left_s(99.0, 4, 4, 60.0) == 0.0


def test_the_previous_figure_counts_only_what_is_left_and_splits_it_over_the_workers():
    previous = {"a": 40.0, "b": 20.0}
    items, done = {"a": 4, "b": 2}, {"a": 2}
    assert progress.previous_left_s(previous, items, done, workers=2) == pytest.approx((20.0 + 20.0) / 2)
    assert progress.previous_left_s(previous, {"a": 4, "new": 1}, {}, workers=1) is None  # a kernel never timed
    assert progress.previous_left_s(previous, {"a": 4, "new": 1}, {"new": 1}, workers=1) == 40.0


def test_a_plain_line_at_the_first_item_then_every_30_s_when_not_on_a_terminal(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    lines: list[str] = []
    line = progress.StatusLine("interpret", {}, workers=2, live=False)
    line.writer = SimpleNamespace(write_line=lines.append)
    line.collected(["t.py::test_a[k1[x=1]]", "t.py::test_a[k1[x=2]]", "t.py::test_a[k2[x=1]]"])
    line.pytest_runtest_logstart("t.py::test_a[k1[x=1]]", None)
    first = "parity: interpret: 0/3 items · k1 · time left unknown yet"
    assert lines == [first]  # a tier shorter than 30 s shows its line too
    clock[0] += 10
    line.pytest_runtest_logreport(SimpleNamespace(when="teardown", nodeid="t.py::test_a[k1[x=1]]"))
    assert lines == [first]  # not yet 30 s since
    clock[0] += 25
    line.pytest_runtest_logstart("t.py::test_a[k2[x=1]]", None)
    assert lines == [first, "parity: interpret: 1/3 items · k2 · ~70 s left"]
    line.pytest_runtest_logreport(SimpleNamespace(when="teardown", nodeid="t.py::test_a[k1[x=1]]"))
    assert sum(line.done.values()) == 1  # a report seen twice counts once


def test_on_a_terminal_the_live_line_replaces_pytests_letters_and_not_otherwise():
    def status(live: bool) -> tuple[str, str, str]:
        gen = progress.StatusLine("interpret", {}, 1, live).pytest_report_teststatus(None, None)  # type: ignore[arg-type]
        next(gen)
        with pytest.raises(StopIteration) as done:
            gen.send(("failed", "F", "FAILED"))
        return done.value.value

    assert status(live=True) == ("failed", "", "FAILED")  # the category (and so the summary) is kept
    assert status(live=False) == ("failed", "F", "FAILED")


def test_the_plain_line_starts_on_a_line_of_its_own_after_pytests_dots(monkeypatch):
    """xdist's dots leave the line open; the status line must not be glued to them (and an empty line gets no
    blank line before it: the negative control)."""
    import io

    from _pytest.config import create_terminal_writer

    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    for dots in ("...", ""):
        out = io.StringIO()
        writer = create_terminal_writer(SimpleNamespace(option=SimpleNamespace(color="no", code_highlight="no"),
                                                        get_verbosity=lambda: 0), out)
        reporter = SimpleNamespace(_tw=writer, write=writer.write, write_line=writer.line)
        line = progress.StatusLine("interpret", {}, workers=1, live=False)
        line.writer = reporter
        line.collected(["t.py::test_a[k1[x=1]]", "t.py::test_a[k1[x=2]]"])
        writer.write(dots)
        clock[0] += 31
        line.pytest_runtest_logstart("t.py::test_a[k1[x=1]]", None)
        expected = (dots + "\n" if dots else "") + "parity: interpret: 0/2 items · k1 · time left unknown yet\n"
        assert out.getvalue() == expected
