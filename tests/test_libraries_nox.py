"""PARITY_LIBRARIES: each tier session installs the pinned libraries without their deps, then what they
import, and selects their specs; without it nothing changes; an unknown name stops the session."""

from __future__ import annotations

import pytest

from tests.test_noxfile import FakeSession, noxfile

TIER_SESSIONS = {"interpret": noxfile.interpret, "cuda-compile": noxfile.cuda_compile,
                 "ascend-compile": noxfile.ascend_compile, "cuda": noxfile.cuda, "ascend": noxfile.ascend}


def _run(session_name: str, monkeypatch, libraries: str | None) -> FakeSession:
    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    monkeypatch.setattr(noxfile.shutil, "which", lambda name: f"/usr/bin/{name}")  # a device is there
    if libraries is None:
        monkeypatch.delenv(noxfile.LIBRARIES_ENV, raising=False)
    else:
        monkeypatch.setenv(noxfile.LIBRARIES_ENV, libraries)
    # the hardware-free tiers run in a shared stack venv their `venv-*` session built in this nox run, and pip
    # installs the libraries into it; the device tiers install into their own venv
    monkeypatch.setattr(noxfile, "STACK_PYTHON", {"venv-upstream": "/stack/bin/python",
                                                  "venv-ascend": "/stack/bin/python"})
    session = FakeSession(session_name)
    TIER_SESSIONS[session_name](session)
    for args, _ in session.ran:
        if args[1:4] == ("-m", "pip", "install"):
            session.installed += args[4:]
    return session


@pytest.mark.parametrize("session_name", sorted(TIER_SESSIONS))
def test_parity_libraries_installs_the_pins_without_deps_and_selects_their_specs(session_name, monkeypatch):
    session = _run(session_name, monkeypatch, "fla,flag_gems")
    no_deps = session.installed.index("--no-deps")
    assert session.installed[no_deps + 1:no_deps + 3] == ["fla-core==0.6.0", "flag-gems==5.0.2"]
    assert {"einops", "pyyaml", "sqlalchemy"} <= set(session.installed[no_deps + 3:])
    tier = session.ran[-1][0]
    assert "--kernels=libraries.fla,libraries.flag_gems" in tier and f"--backend={session_name}" in tier


@pytest.mark.parametrize("session_name", sorted(TIER_SESSIONS))
def test_without_parity_libraries_no_library_is_installed_or_selected(session_name, monkeypatch):
    session = _run(session_name, monkeypatch, None)
    assert "--no-deps" not in session.installed
    assert not [a for a in session.ran[-1][0] if a.startswith("--kernels")]


def test_an_unknown_library_stops_the_session_naming_the_valid_ones(monkeypatch):
    with pytest.raises(SystemExit, match="fla, liger, flag_gems"):
        _run("interpret", monkeypatch, "flashattn")
