"""The `parity` command a new user is told to type exists: pyproject's console scripts resolve, `nox -s
venv-upstream` installs them into that venv, and the README says how to reach them before it first uses them."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ACTIVATE = "source .nox/venv-upstream/bin/activate"


def scripts() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib", reason="pyproject is read with Python 3.11's tomllib")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_every_console_script_names_a_function_that_exists():
    assert set(scripts()) == {"parity", "parity-record"}
    for target in scripts().values():
        module, _, name = target.partition(":")
        assert callable(getattr(importlib.import_module(module), name)), target


def imported_by(code: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return set(proc.stdout.split())


def test_parity_record_starts_without_the_report_stack():
    """Recording runs in the user's own python, which may lack numpy or tabulate. Control: the report's entry
    (parity.cli) does import them, so the check can see them."""
    loaded = imported_by("from parity.__main__ import main\n"
                         "try:\n    main(['record', '--help'])\nexcept SystemExit:\n    pass")
    assert not {"numpy", "torch", "tabulate", "parity.cli"} & loaded
    assert {"numpy", "parity.cli"} <= imported_by("import parity.cli")


def first_uses(text: str) -> tuple[int | None, int | None]:
    """Where the README first says how to reach the command, and where a shell block first runs bare `parity`."""
    said = text.find(ACTIVATE)
    used = None
    for block in re.finditer(r"```bash\n(.*?)```", text, re.S):
        bare = re.search(r"^\s*parity\s", block[1], re.M)
        if bare:
            used = block.start(1) + bare.start()
            break
    return (said if said >= 0 else None), used


def test_the_readme_says_how_to_reach_parity_before_it_first_runs_it():
    said, used = first_uses(README.read_text())
    assert used is not None and said is not None and said < used
    # control: a README that runs `parity check` with no word on where it comes from fails the check
    broken = "## Try it\n\n```bash\nparity check examples.user_kernels.l2norm\n```\n"
    said, used = first_uses(broken)
    assert used is not None and said is None


def test_nox_venv_upstream_installs_the_commands_once(monkeypatch, tmp_path):
    noxfile = pytest.importorskip("noxfile", reason="the noxfile needs nox: `pip install nox`")
    from tests.test_noxfile import FakeSession

    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    monkeypatch.setattr(noxfile, "STACK_PYTHON", {})
    session = FakeSession("venv-upstream")
    session.bin = str(tmp_path)
    noxfile.venv_upstream(session)
    assert session.installed[-3:] == ["--no-deps", "-e", str(ROOT)]
    (tmp_path / "parity").write_text("")  # control: once the script is there, no reinstall on every tier run
    again = FakeSession("venv-upstream")
    again.bin = str(tmp_path)
    noxfile.venv_upstream(again)
    assert "-e" not in again.installed
