"""Vendors as data: a third vendor with its own tracker (tests/third_vendor_tier.py) gets its own draft, and adding it
touches at most 3 files: its backend module (which declares its Tracker), its registration line, and nothing else.
Each check has its control: the same record on an upstream tier goes to upstream's tracker, and a planted table
naming the vendor is counted as a file it had to touch."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from parity import backends
from parity.backends.trackers import ASCEND, UPSTREAM
from parity.repro import compile_repro
from parity.results import OwnerKind
from parity.triage.decide import decide
from parity.triage.drafts import finding_of, tracker_for
from parity.triage.owner import make_owner
from tests import synthetic_records, third_vendor_tier
from tests.third_vendor_tier import TRACKER

ROOT = Path(__file__).resolve().parents[1]
PARITY = ROOT / "parity"
MESSAGE = "error: acme-isel: cannot select tt.dot on X1"
ENV = {"triton": "3.4.0", "triton_acme": "0.1", "python": "3.11", "target_arch": "X1"}


@pytest.fixture
def acme() -> Iterator[str]:
    """The tier registered for one test (the one line a real vendor adds to parity.backends.BACKENDS), then gone."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(backends.BACKENDS, third_vendor_tier.NAME, third_vendor_tier.REGISTRATION)
        backends.backend_class.cache_clear()
        yield third_vendor_tier.NAME
    backends.backend_class.cache_clear()


def failing(tier: str) -> dict[str, object]:
    """A compile that fails on `tier` past the frontend while the interpreter and cuda-compile take the case."""
    record = synthetic_records.rec(tier, "compile", "tile", "N=37", "failed", reason=MESSAGE, compile={
        "ok": False, "error_kind": "backend", "stage_reached": "ttgir", "message": MESSAGE, "kernel": "tile_kernel"})
    others = {"cuda-compile": synthetic_records.rec("cuda-compile", "compile", "tile", "N=37", "passed",
                                                    compile={"ok": True}),
              "interpret": synthetic_records.rec("interpret", "interpret", "tile", "N=37", "passed")}
    record["owner"] = decide(record, {t: r for t, r in others.items() if t != tier})
    return record


def test_its_failing_record_gets_its_own_draft(acme: str, tmp_path: Path) -> None:
    record = failing(acme)
    assert record["owner"] is not None and record["owner"].who is OwnerKind.TRITON  # triage: the vendor's tool
    finding = finding_of(record)
    assert finding.trackers == (TRACKER,) and finding.files == ("ISSUE.md",)
    compile_repro.write_repro(tmp_path, "print()\n", record, ENV, acme)  # type: ignore[arg-type]
    issue = (tmp_path / "ISSUE.md").read_text()
    assert issue.startswith("# [acme] `tile_kernel` fails to compile (backend)")
    assert f"File at: {TRACKER.new_issue}" in issue and "triton-acme: 0.1" in issue
    assert UPSTREAM.new_issue not in issue and "triton-acme bug" in finding.words


def test_the_same_failure_on_an_upstream_tier_goes_to_upstreams_tracker(tmp_path: Path) -> None:
    # controls: on ascend-compile (a family of its own) the same failure is triton-ascend's; on cuda-compile, owned
    # by the Triton family as Acme's is, it is filed with upstream
    record = failing("ascend-compile")
    assert record["owner"] is not None and record["owner"].who is OwnerKind.TRITON_ASCEND
    assert finding_of(record).trackers == (ASCEND,)
    record = {**record, "backend": "cuda-compile", "owner": make_owner("triton", "Triton", "only cuda-compile fails")}
    compile_repro.write_repro(tmp_path, "print()\n", record, ENV, "cuda-compile")  # type: ignore[arg-type]
    issue = (tmp_path / "ISSUE.md").read_text()
    assert f"File at: {UPSTREAM.new_issue}" in issue and TRACKER.new_issue not in issue
    assert tracker_for(OwnerKind.TRITON, "ascend-compile") is UPSTREAM  # the compiler triton-ascend builds on


def vendor_words(tracker_module: Path) -> set[str]:
    """What names the vendor in code: its tier's name and its tracker's string facts (name, page, env key,
    distribution), read from the module that declares them."""
    tree = ast.parse(tracker_module.read_text())
    words = {third_vendor_tier.NAME, TRACKER.name, TRACKER.new_issue, TRACKER.release_key, TRACKER.dist}
    assert all(any(isinstance(n, ast.Constant) and n.value == w for n in ast.walk(tree)) for w in words)
    return words


def naming_files(root: Path, words: set[str]) -> set[Path]:
    """The engine files whose string literals (docstrings and comments aside) name one of `words`."""
    found = set()
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        docs = {id(node.body[0].value) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body and isinstance(node.body[0], ast.Expr)}
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
               and any(w in n.value for w in words) for n in ast.walk(tree)):
            found.add(path)
    return found


def touched(words: set[str], engine: Path) -> set[str]:
    """The files a vendor touches: its own module, the registration (parity/backends/__init__.py holds the one
    line), and every engine file that names it (a table keyed by its tracker, a page written out twice)."""
    own = {"tests/third_vendor_tier.py", "parity/backends/__init__.py"}
    return own | {str(p.relative_to(engine.parent)) for p in naming_files(engine, words)}


def test_the_vendor_touches_at_most_three_files() -> None:
    words = vendor_words(ROOT / "tests" / "third_vendor_tier.py")
    files = touched(words, PARITY)
    assert len(files) <= 3, sorted(files)


def test_a_table_naming_the_vendor_counts_as_a_file_it_touched(tmp_path: Path) -> None:
    engine = tmp_path / "parity"
    (engine / "repro").mkdir(parents=True)
    (engine / "repro" / "issue.py").write_text(f'NEW_ISSUE_URLS = {{"{TRACKER.name}": "{TRACKER.new_issue}"}}\n')
    (engine / "report").mkdir()
    (engine / "report" / "words.py").write_text(f'"""Names {TRACKER.name} in a docstring only."""\n')
    words = vendor_words(ROOT / "tests" / "third_vendor_tier.py")
    assert touched(words, engine) == {"tests/third_vendor_tier.py", "parity/backends/__init__.py",
                                      "parity/repro/issue.py"}


def test_each_trackers_page_is_written_in_one_engine_file() -> None:
    """The tables keyed by tracker (its page, its bug form) are reads of its Tracker: only trackers.py names them."""
    for tracker in (UPSTREAM, ASCEND):
        found = {str(p.relative_to(PARITY)) for p in naming_files(PARITY, {tracker.new_issue})}
        assert found == {"backends/trackers.py"}, (tracker.name, found)
