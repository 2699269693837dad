"""The status line's arithmetic (pure) and its two faces: a live line on a terminal, a plain line every 30 s."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from parity.driver import progress


def test_the_kernel_of_an_item_is_read_from_its_id():
    assert progress.kernel_of("suites/test_compile.py::test_compile[vector_add[N=1,dtype=fp16]]") == "vector_add"
    assert progress.kernel_of("suites/test_compile.py::test_variants[user_l2norm_rows]") == "user_l2norm_rows"


def test_previous_durations_are_summed_per_kernel_and_odd_records_ignored():
    records = [{"kernel": "a", "timing": {"case_wall_s": 2.0}},
               {"kernel": "a", "timing": {"case_wall_s": 0.5, "wait_s": 0.5}},
               {"kernel": "b", "timing": None}, {"kernel": "c"}, {"timing": {"case_wall_s": 5}}]
    assert progress.previous_seconds(records) == {"a": 3.0}


def test_without_an_earlier_run_there_is_no_estimate_however_far_the_run_is(monkeypatch):
    """The first items are no guide: no earlier figure means "n of N" and nothing more, never a pace; the control:
    the same line with an earlier run's figure carries the time left."""
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    for previous, expected in (({}, "interpret: 2 of 4 items · k1"),
                               ({"k1": 40.0, "k2": 200.0}, "interpret: 2 of 4 items · k1 · ~3 min left")):
        line = progress.StatusLine("interpret", previous, workers=1, live=False)
        line.collected(["t.py::test_a[k1[x=1]]", "t.py::test_a[k1[x=2]]", "t.py::test_a[k2[x=1]]",
                        "t.py::test_a[k2[x=2]]"])
        for node in ("t.py::test_a[k1[x=1]]", "t.py::test_a[k1[x=2]]"):
            clock[0] += 0.1  # two fast items: a pace from them would say "~1 s left"
            line.pytest_runtest_logstart(node, None)
            line.pytest_runtest_logreport(SimpleNamespace(when="teardown", nodeid=node))
        assert line.text() == expected
    assert progress.status_text("interpret", 4, 4, "k2", 10.0) == "interpret: 4 of 4 items · k2 · finishing"


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
    first = "parity: interpret: 0 of 3 items · k1"
    assert lines == [first]  # a tier shorter than 30 s shows its line too
    clock[0] += 10
    line.pytest_runtest_logreport(SimpleNamespace(when="teardown", nodeid="t.py::test_a[k1[x=1]]"))
    assert lines == [first]  # not yet 30 s since
    clock[0] += 25
    line.pytest_runtest_logstart("t.py::test_a[k2[x=1]]", None)
    assert lines == [first, "parity: interpret: 1 of 3 items · k2"]
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
        expected = (dots + "\n" if dots else "") + "parity: interpret: 0 of 2 items · k1\n"
        assert out.getvalue() == expected


def write_run(d, backend="interpret", level="quick", interrupted=False, seconds=(("k1", 3.0),), carried=False):
    import json

    d.mkdir(parents=True, exist_ok=True)
    extra = {"carried_over": True} if carried else {}
    records = [{"kernel": k, "case": f"x={i}", "timing": {"case_wall_s": s}, **extra}
               for i, (k, s) in enumerate(seconds)]
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (d / "env.json").write_text(json.dumps({"backend": backend, "level": level, "interrupted": interrupted}))


def test_the_estimate_comes_from_an_earlier_complete_run_of_the_same_tier_and_level(tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "interpret"
    write_run(d, seconds=(("k1", 3.0), ("k1", 2.0)))
    assert progress.previous_durations(d, "interpret", "quick") == {"k1": 5.0}
    # controls: another level, another tier, an interrupted run say nothing of this run's time
    assert progress.previous_durations(d, "interpret", "full") == {}
    assert progress.previous_durations(d, "cuda-compile", "quick") == {}
    write_run(d, interrupted=True, seconds=(("k1", 0.5),))
    assert progress.previous_durations(d, "interpret", "quick") == {}
    # ...then previous/, which holds the last complete run (parity.run.rundir), is read instead
    write_run(d / "previous", seconds=(("k1", 7.0), ("k2", 1.0)))
    assert progress.previous_durations(d, "interpret", "quick") == {"k1": 7.0, "k2": 1.0}
    write_run(d / "previous", seconds=(("k1", 7.0),), carried=True)  # an older run's records, not its own time
    assert progress.previous_durations(d, "interpret", "quick") == {}


def test_a_complete_run_leaves_its_durations_in_parity_cache_for_a_new_results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))
    first, fresh = tmp_path / "a" / "interpret", tmp_path / "b" / "interpret"
    write_run(first, interrupted=True, seconds=(("k1", 1.0),))
    progress.remember(first, "interpret", "quick")  # control: an interrupted run's durations are partial: not kept
    assert progress.previous_durations(fresh, "interpret", "quick") == {}
    write_run(first, seconds=(("k1", 4.0),))
    progress.remember(first, "interpret", "quick")
    write_run(tmp_path / "c", seconds=(("k2", 6.0),))
    progress.remember(tmp_path / "c", "interpret", "quick")  # other kernels add to what the cache knows
    assert progress.previous_durations(fresh, "interpret", "quick") == {"k1": 4.0, "k2": 6.0}
    assert progress.previous_durations(fresh, "interpret", "full") == {}
    line = progress.StatusLine("interpret", progress.previous_durations(fresh, "interpret", "quick"), 2, False)
    line.collected(["t.py::test_a[k1[x=1]]", "t.py::test_a[k2[x=1]]"])
    assert line.text() == "interpret: 0 of 2 items · starting · ~5 s left"  # (4 + 6) worker seconds over 2 workers
