"""parity envelope --replay on a bundle recorded here (under the interpreter): each planted kernel found at its exact
size on each target by the compile tiers, the control said to be safe, and what the recording cannot say said so.

- rec_grid: grid (cdiv(T, 64), 32), recorded at T = 100, 300, 1,000: on Ascend 2,048 * 32 = 65,536 programs at
  T = 131,009; CUDA's x takes it to 1M;
- rec_rows: a persistent grid over rows of 4,096 at an int32 offset, recorded at T = 16, 48, 160: x's last offset
  passes 2^31 - 1 at T = 524,289;
- rec_rows_wide (control): the same rows at an int64 offset: safe to 1M on both;
- rec_once: recorded once: no axis varies, and `--grow x.2+T=..1M` grows it with its grid not checked;
- rec_block: BLOCK = next_power_of_2(N), recorded at N = 100, 300, 1,000: on Ascend its tile passes the UB at
  N = 16,385 (grown to 64K only: a 1M-lane block would cost CUDA's ptxas minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

pytest.importorskip("safetensors", reason="record bundles need safetensors: pip install safetensors")

from parity.record import bundle as fmt
from parity.record.capture import WorkloadRecorder
from tests.tier_python import ROOT, tier_python

VENVS = {"ascend": "venv-ascend", "cuda": "venv-upstream"}
MAX = 1 << 20
D = 4096

KERNELS = '''
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T"])
def rec_grid(x, y, T, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    o = i_bh * T + i_t * BT + tl.arange(0, BT)
    m = i_t * BT + tl.arange(0, BT) < T
    tl.store(y + o, tl.load(x + o, mask=m) * 2, mask=m)


@triton.jit(do_not_specialize=["T"])
def rec_once(x, y, T, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    o = i_bh * T + i_t * BT + tl.arange(0, BT)
    m = i_t * BT + tl.arange(0, BT) < T
    tl.store(y + o, tl.load(x + o, mask=m) * 2, mask=m)


@triton.jit(do_not_specialize=["N"])
def rec_block(x, y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    o = tl.arange(0, BLOCK)
    m = o < N
    v = tl.load(x + row * N + o, mask=m, other=0.0)
    tl.store(y + row * N + o, v / tl.sum(v * v, axis=0), mask=m)


@triton.jit(do_not_specialize=["T"])
def rec_rows(x, y, T, D: tl.constexpr):
    for row in range(tl.program_id(0), T, tl.num_programs(0)):
        o = row * D + tl.arange(0, D)
        tl.store(y + o, tl.load(x + o) * 2)


@triton.jit(do_not_specialize=["T"])
def rec_rows_wide(x, y, T, D: tl.constexpr):
    for row in range(tl.program_id(0), T, tl.num_programs(0)):
        o = (row + tl.zeros((D,), tl.int64)) * D + tl.arange(0, D)  # int64 (row.to fails on the interpreter's int)
        tl.store(y + o, tl.load(x + o) * 2)
'''


def workload(mod: Any) -> None:
    """The recorded workload: each kernel at the sizes its docstring line names."""
    for t in (100, 300, 1000):
        x = torch.randn(1, 32, t)
        mod.rec_grid[(-(-t // 64), 32)](x, torch.full_like(x, float("nan")), t, BT=64)
    x = torch.randn(1, 32, 1000)
    mod.rec_once[(16, 32)](x, torch.full_like(x, float("nan")), 1000, BT=64)
    for t in (16, 48, 160):
        x = torch.randn(t, D)
        for kernel in (mod.rec_rows, mod.rec_rows_wide):
            kernel[(4,)](x, torch.full_like(x, float("nan")), t, D=D)
    for n in (100, 300, 1000):
        x = torch.randn(1, n)
        mod.rec_block[(1,)](x, torch.full_like(x, float("nan")), n, BLOCK=1 << (n - 1).bit_length())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bundle of the workload; its kernel module is gone afterwards, so the envelope takes the captured source."""
    where = tmp_path_factory.mktemp("envelope-replay")
    name = f"rec_envelope_{os.getpid()}"
    (where / f"{name}.py").write_text(KERNELS)
    sys.path.insert(0, str(where))
    root = where / "bundle"
    try:
        mod = __import__(name)
        fmt.write_header(root, ["test"], {"keep": 2}, {})
        rec = WorkloadRecorder(root, keep=2)
        rec.install()
        try:
            workload(mod)
        finally:
            rec.uninstall()
    finally:
        sys.path.remove(str(where))
        sys.modules.pop(name, None)
    return root


def envelope(target: str, root: Path, grow: str = "", kernels: str = "") -> dict[str, dict[str, Any]]:
    python = tier_python(VENVS[target])
    if not python.exists():
        pytest.skip(f"no {python}: `nox -s {VENVS[target]}` creates it")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # conftest sets it; compile tiers never
    env.update(PYTHONPATH=str(ROOT), PATH=f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run([str(python), "-m", "parity.envelope", target, "--replay", str(root), "--kernels", kernels,
                           "--grow", grow], capture_output=True, text=True, timeout=1800, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line[len("ENVELOPE "):]) for line in proc.stdout.splitlines() if line.startswith("ENVELOPE ")]
    return {r["kernel"]: r for r in rows}


@pytest.fixture(scope="module", params=["ascend", "cuda"])
def planted(request: pytest.FixtureRequest, bundle: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    return request.param, envelope(request.param, bundle, kernels="rec_grid,rec_rows,rec_rows_wide,rec_once,rec_nope")


def crossing(row: dict[str, Any]) -> tuple[int | None, int | None, str | None]:
    return row["last_ok"], row["first_bad"], row["crossings"][0]["limit"] if row["crossings"] else None


def test_the_recorded_grid_that_grows_with_t(planted):
    target, rows = planted
    row = rows["rec_grid"]
    assert row["axis"] == {"name": "T", "low": 1000, "high": MAX}  # from the largest recorded launch
    assert row["members"]["grid.0"] == "cdiv(T, 64)" and row["grid_unknown"] is None
    if target == "ascend":
        assert crossing(row) == (131008, 131009, "grid")
        assert "grid should be less than 65536" in row["crossings"][0]["evidence"]
        assert row["bad_probe"]["grids"][0][1] == [2048, 32, 1] and row["ok_probe"]["grids"][0][1] == [2047, 32, 1]
        assert {131008, 131009} <= set(row["probes"])  # both proven by a check of their own
    else:  # CUDA's x takes 2^31 - 1 programs
        assert crossing(row) == (MAX, None, None)


def test_the_recorded_int32_offset_and_its_int64_control(planted):
    _, rows = planted
    row = rows["rec_rows"]  # x is (T, 4,096): its last offset T * 4,096 - 1 passes 2^31 - 1 from T = 524,289
    assert row["members"]["x.0"] == "T" and "grid.0" not in row["members"]  # the persistent grid stays (4,)
    assert crossing(row) == (524288, 524289, "int32 offsets")
    assert row["crossings"][0]["proven_by_run"] is False
    safe = rows["rec_rows_wide"]
    assert crossing(safe) == (MAX, None, None) and safe["ok_probe"]["offsets"] == "i64"
    assert safe["ok_probe"]["grids"][0][1] == [4, 1, 1] and safe["storm"]["compiles"] == 1


def test_a_kernel_recorded_at_one_size_is_told_to_name_an_axis(planted):
    _, rows = planted
    assert "no axis varies between its launches; name one with --grow" in rows["rec_once"]["skipped"]
    assert "no kernel or module of that name was recorded" in rows["rec_nope"]["skipped"]  # a name not recorded
    assert "rec_block" not in rows  # the names narrow the run


def test_a_named_axis_grows_with_its_grid_said_to_be_not_checked(bundle):
    row = envelope("ascend", bundle, grow="x.2+T=..1M", kernels="rec_once")["rec_once"]
    assert "no two recorded launches differ" in row["grid_unknown"]
    assert row["checked"] == "on-chip memory, int32 offsets, launcher"  # the sentence leaves the grid out
    assert crossing(row) == (MAX, None, None) and row["ok_probe"]["grids"][0][1] == [16, 32, 1]  # as recorded


def test_the_recorded_block_that_grows_with_n(bundle):
    row = envelope("ascend", bundle, grow="N=..64K", kernels="rec_block")["rec_block"]
    assert row["members"]["BLOCK"] == "next_power_of_2(N)"
    # 32,768 fp32 lanes need 2,621,696 bits of the 1,572,864-bit UB, as the spec's planted env_block
    assert crossing(row) == (16384, 16385, "on-chip memory")
    assert "ub overflow, requires" in row["crossings"][0]["evidence"]
