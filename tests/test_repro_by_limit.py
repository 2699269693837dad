"""One repro per kernel and named limit in a results dir (parity.repro.by_limit), with its negative controls:
a failure no limit owns, another kernel, another limit and a dropped folder each get a repro of their own."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from parity.repro import by_limit, run_repro
from parity.spec import Case
from parity.triage.owner import make_owner


def record(case: str, *, kernel: str = "k", limit: str | None = "upstream-block-ptr-removed",
           status: str = "error") -> dict[str, Any]:
    owner = make_owner("author", "kernel author", "fails on every tier", limit=limit)
    return {"kernel": kernel, "case": case, "status": status, "owner": owner, "repro": None, "timing": {}}


@pytest.fixture
def attach(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Any, list[str]]:
    """run_repro.attach with the full repro stubbed: it writes a folder per case and counts the cases."""
    made: list[str] = []

    def full(rec: dict[str, Any], spec: Any, case: Any, backend: Any, finding: Any, **_: Any) -> None:
        folder = tmp_path / "repros" / f"{rec['kernel']}__{rec['case']}"
        folder.mkdir(parents=True)
        rec["repro"] = folder.relative_to(tmp_path).as_posix()
        made.append(rec["case"])

    monkeypatch.setattr(run_repro, "_attach", full)

    def call(rec: dict[str, Any]) -> dict[str, Any]:
        # the backend is read for its name alone (a bad input's note is headed with it)
        run_repro.attach(rec, object(), Case({"n": 1}), SimpleNamespace(name="interpret"),  # type: ignore[arg-type]
                         seed=0, cache=None, results_dir=tmp_path)
        return rec

    return call, made


def test_later_cases_of_a_kernel_and_limit_link_the_first_repro(attach: Any) -> None:
    call, made = attach
    first, second = call(record("n=1")), call(record("n=2"))
    assert made == ["n=1"]
    assert second["repro"] == first["repro"]
    assert second["repro_of"] == {"case": "n=1", "limit": "upstream-block-ptr-removed"}
    assert "n=1" in second["repro_note"]


def test_negative_controls_each_get_their_own_repro(attach: Any, tmp_path: Path) -> None:
    call, made = attach
    call(record("n=1"))
    call(record("n=2", limit=None))  # no limit owns it: its cause may depend on the shape
    call(record("n=3", kernel="other"))  # another kernel
    call(record("n=4", limit="upstream-power-of-2"))  # another limit
    assert made == ["n=1", "n=2", "n=3", "n=4"]
    # a repro the fresh-process check dropped is not linked: the next case writes its own
    (tmp_path / "repros" / "k__n=1").rmdir()
    call(record("n=5"))
    assert made[-1] == "n=5"


def test_a_passing_case_is_never_linked(tmp_path: Path) -> None:
    by_limit.remember({**record("n=1"), "repro": "repros/k__n=1"}, tmp_path)
    (tmp_path / "repros" / "k__n=1").mkdir(parents=True)
    passed = record("n=2", status="passed")
    assert not by_limit.link(passed, tmp_path) and passed["repro"] is None
