"""An issue draft names the library's version: metadata, else its git commit, else the snapshot it was loaded from."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from parity.triage import library_rule as owner

INFO = owner.LibraryInfo("demo lib", "parity-demo-lib-not-installed", "https://example.org/demo", ("parity_demo_lib",),
                         ("parity_demo",))


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def package(tmp_path, monkeypatch):
    """parity_demo_lib in a fresh git repository at tmp_path/repo, importable, not imported yet."""
    if subprocess.run(["git", "--version"], capture_output=True, check=False).returncode != 0:
        pytest.skip("git is not installed here (apt-get install git)")
    repo = tmp_path / "repo"
    (repo / "parity_demo_lib").mkdir(parents=True)
    (repo / "parity_demo_lib" / "__init__.py").write_text("X = 1\n")
    _git(repo, "init", "-q")
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.delitem(sys.modules, "parity_demo_lib", raising=False)
    return repo


def test_a_git_checkout_is_named_by_its_commit(package):
    _git(package, "add", ".")
    _git(package, "commit", "-q", "-m", "one")
    assert owner.library_version(INFO) == f"git {_git(package, 'rev-parse', 'HEAD')}"


def test_an_untracked_copy_inside_another_checkout_is_not_that_checkouts_commit(package, monkeypatch):
    """Negative control: a snapshot copied (git-ignored) into some repository must not take its HEAD."""
    (package / ".gitignore").write_text("parity_demo_lib/\n")
    _git(package, "add", ".gitignore")
    _git(package, "commit", "-q", "-m", "ignore the copy")
    assert owner.library_version(INFO) is None  # nothing else says: the draft reads "unknown version"
    stand_in = types.ModuleType("parity_demo_lib")
    stand_in.__path__ = [str(package / "parity_demo_lib")]  # type: ignore[attr-defined]
    stand_in.__version__ = "snapshot " + "ab" * 20  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "parity_demo_lib", stand_in)
    assert owner.library_version(INFO) == "snapshot " + "ab" * 20


def test_the_mojo_stand_in_carries_its_snapshot_commit():
    """libraries/mojo_opset.py stamps libraries/pins.SNAPSHOTS on the package it registers; owner reads it back."""
    from libraries import pins

    assert pins.snapshot_version("mojo_opset") == f"snapshot {pins.SNAPSHOTS['mojo_opset']}"
    assert pins.snapshot_version("not_a_snapshot") is None
    mojo = pytest.importorskip("libraries._mojo")
    if mojo.unavailable():
        pytest.skip(mojo.unavailable())
    info = owner.library_of("mojo_opset")
    found = owner.library_version(info)
    if found and found.startswith("git "):  # a real checkout on the path names itself
        return
    assert found == f"snapshot {pins.SNAPSHOTS['mojo_opset']}"
