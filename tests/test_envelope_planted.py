"""The planted envelope set, found at its exact sizes on each target by the compile tiers (no memory allocated),
and the control said to be safe to 1M tokens. Each target runs in its own venv; a missing venv skips."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from tests.tier_python import ROOT, tier_python

VENVS = {"ascend": "venv-ascend", "cuda": "venv-upstream"}
MAX = 1 << 20


def envelope(target: str, module: str, grow: str = "") -> dict[str, dict[str, Any]]:
    python = tier_python(VENVS[target])
    if not python.exists():
        pytest.skip(f"no {python}: `nox -s {VENVS[target]}` creates it")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # conftest sets it; compile tiers never
    env.update(PYTHONPATH=str(ROOT), PATH=f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(python), "-m", "parity.envelope", target, "--kernels", module, "--grow", grow],
                          capture_output=True, text=True, timeout=1800, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line[len("ENVELOPE "):]) for line in proc.stdout.splitlines() if line.startswith("ENVELOPE ")]
    return {r["kernel"]: r for r in rows}


@pytest.fixture(scope="module", params=["ascend", "cuda"])
def planted(request: pytest.FixtureRequest) -> tuple[str, dict[str, dict[str, Any]]]:
    return request.param, envelope(request.param, "tests.planted_envelope")


def crossing(row: dict[str, Any]) -> tuple[int | None, int | None, str | None]:
    return row["last_ok"], row["first_bad"], row["crossings"][0]["limit"] if row["crossings"] else None


def test_the_grid_that_grows_with_t(planted):
    target, rows = planted
    if target == "ascend":  # (cdiv(T, 64), 32): 2,048 * 32 = 65,536 programs at T = 131,009
        assert crossing(rows["env_grid_bh"]) == (131008, 131009, "grid")
        assert "grid should be less than 65536" in rows["env_grid_bh"]["crossings"][0]["evidence"]
    else:  # CUDA's x takes 2^31 - 1 programs: safe to 1M
        assert crossing(rows["env_grid_bh"]) == (MAX, None, None)
    # (1, cdiv(T, 8)): y = 65,536 at T = 524,281, past CUDA's y limit and Ascend's product alike
    assert crossing(rows["env_grid_y"]) == (524280, 524281, "grid")
    assert rows["env_grid_y"]["ok_probe"]["grids"][0][1] == [1, 65535, 1]


def test_the_int32_offset_that_wraps_at_2_31(planted):
    _, rows = planted
    row = rows["env_int32"]  # x is (T, 4,096): its last offset is T * 4,096 - 1 > 2^31 - 1 from T = 524,289
    assert crossing(row) == (524288, 524289, "int32 offsets")
    assert row["crossings"][0]["proven_by_run"] is False  # 8 GiB of fp16 per tensor: said, not run


def test_the_storm_and_the_control(planted):
    _, rows = planted
    assert rows["env_storm"]["storm"] == {"sizes": [1008, 1024, 1040], "compiles": 3, "at_one": 1}  # T a constexpr
    safe = rows["env_safe"]
    assert crossing(safe) == (MAX, None, None)
    assert safe["storm"]["compiles"] == 1 and safe["ok_probe"]["offsets"] == "i64"


@pytest.mark.parametrize("target", ["ascend"])
def test_the_block_that_grows_with_n(target):
    row = envelope(target, "tests.planted_envelope_block", "N=..64K")["env_block"]
    # BLOCK = next_power_of_2(N): 32,768 fp32 lanes need 2,621,696 bits of the 1,572,864-bit UB
    assert crossing(row) == (16384, 16385, "on-chip memory")
    assert "ub overflow, requires" in row["crossings"][0]["evidence"]
