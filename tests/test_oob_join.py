"""A red zone's finding joined with the kernel's unmasked accesses: AUTHOR.md names the source line whose pointer
derives from the argument the red zone caught, every one when several do, and says so when none does. Controls:
a masked load is never named, nor an unmasked access of another argument."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.repro.author import joined_lines, oob_section
from parity.run.redzone import RedZones
from parity.run.unmasked import Access, pointer_args, stray_stores, touching

ROOT = Path(__file__).resolve().parents[1]

SOURCE = """
def k(x, y, out, idx, N, stride, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    p = y + o * stride
    i = tl.load(idx + o)
    a = tl.load(x + i)
    b = tl.load(p)
    for _ in range(3):
        p += BLOCK
        c = tl.load(p, mask=o < N)
    tl.store(out + o, a + b)
    tl.store(pointer=out + o, value=a)
"""


def test_each_unmasked_access_names_the_parameters_its_pointer_derives_from():
    loads = dict(pointer_args(SOURCE, "load"))
    assert loads == {5: ("idx", "BLOCK"), 6: ("x",), 7: ("y", "stride", "BLOCK")}  # line 10 is masked: absent
    assert "idx" not in loads[6]  # a loaded value is data, not the pointer's base
    assert dict(pointer_args(SOURCE, "store")) == {11: ("out", "BLOCK"), 12: ("out", "BLOCK")}


class _Source:
    """Stands in for a kernel: stray_stores reads `fn`'s source."""

    def __init__(self, source: str) -> None:
        self.fn = source


def _stray(source: str, tensor: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    lines = source.splitlines(keepends=True)
    monkeypatch.setattr(inspect, "getsourcelines", lambda fn: (lines, 1))
    monkeypatch.setattr(inspect, "getsourcefile", lambda fn: "k.py")
    return [int(a.where.split(":")[1]) for a in stray_stores(_Source(source), tensor)]


def test_a_write_past_a_buffer_the_host_made_too_small_names_its_one_element_stores(monkeypatch):
    # FlagGems 5.0.2's vdot: grid_size partial sums allocated, 2 * grid_size stored, each an unmasked scalar store
    scalar = ("def k(x, part, n, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n"
              "    tl.store(part + pid * 2, 1.0)\n    tl.store(part + pid * 2 + 1, 2.0)\n")
    assert _stray(scalar, "part", monkeypatch) == [3, 4]
    # control: a masked block store touches the tensor too, so the write may be a mask the lowering dropped
    mixed = ("def k(x, part, n, BLOCK: tl.constexpr):\n    o = tl.arange(0, BLOCK)\n"
             "    tl.store(part + o, 1.0, mask=o < n)\n    tl.store(part + n, 2.0)\n")
    assert _stray(mixed, "part", monkeypatch) == []
    # an unmasked block store is named alone, as before
    block = ("def k(x, part, n, BLOCK: tl.constexpr):\n    o = tl.arange(0, BLOCK)\n"
             "    tl.store(part + o, 1.0)\n    tl.store(part + n, 2.0)\n")
    assert _stray(block, "part", monkeypatch) == [3]
    assert _stray(scalar, "x", monkeypatch) == []  # no store touches x


def test_touching_matches_the_argument_a_red_zone_names():
    a = Access("load", "k.py:3: tl.load(y + o)", ("y", "BLOCK"))
    b = Access("load", "k.py:4: tl.load(q + o)", ("q",))
    assert touching([a, b], "y") == [a] and touching([a, b], "x, q[1]") == [b] and touching([a, b], "out") == []


def _kernels():
    pytest.importorskip("triton")
    from tests import planted_oob_join

    return planted_oob_join


def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _past(t: torch.Tensor, n: int) -> torch.Tensor:
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), t.storage_offset(), (t.numel() + n,), (1,))


def test_a_read_past_one_argument_is_named_with_its_unmasked_load_only():
    k = _kernels().masked_and_unmasked_kernel
    x, y, out = torch.randn(1000), torch.randn(1000), torch.zeros(1)
    zones = RedZones()

    def inner(kernel, gx, gy, gout, n, *, grid, warmup, **kw):  # the kernel's arithmetic, its tail unmasked on y
        gout[0] = gx.sum() + _past(gy, 24).sum()

    zones.layer(inner, k, x, y, out, 1000, grid=(1,), warmup=False, BLOCK=1024)
    (read,) = zones.reads
    assert (read.tensor, read.into, read.count) == ("y", "out", 1), read
    wheres = [a["where"] for a in read.joined]
    assert len(wheres) == 1 and f":{_line_of(k, 'tl.load(y + o)')}: " in wheres[0]
    assert "tl.load(x + o, mask" not in " ".join(wheres)  # control: the masked load is not named
    assert zones.summary()["reads"][0]["accesses"][0]["args"] == ["y"]
    # control: the same kernel in bounds reads no red zone
    clean = RedZones()
    clean.layer(lambda kernel, gx, gy, gout, n, *, grid, warmup, **kw: gout.fill_(float(gx.sum() + gy.sum())),
                k, x, y, out, 1000, grid=(1,), warmup=False, BLOCK=1024)
    assert not clean.reads and clean.summary() is None


def test_a_value_already_holding_a_red_zone_pattern_is_not_read_again():
    """A second launch over a tensor an earlier launch's stray read filled: its payload matches this launch's
    zones by index only, so no read is attributed (the first launch's read was already named)."""
    k = _kernels().masked_and_unmasked_kernel
    x, y, out = torch.randn(1000), torch.randn(1000), torch.zeros(1)
    first = RedZones()
    first.layer(lambda kernel, gx, gy, gout, n, *, grid, warmup, **kw: gout.fill_(float(_past(gy, 4).sum())),
                k, x, y, out, 1000, grid=(1,), warmup=False, BLOCK=1024)
    assert first.reads
    carried = torch.zeros(1000)
    carried[0] = out[0]  # the payload, carried into an input of the next launch
    again = RedZones()
    again.layer(lambda kernel, gx, gy, gout, n, *, grid, warmup, **kw: gout.copy_(gx[:1]),
                k, carried, y, out, 1000, grid=(1,), warmup=False, BLOCK=1024)
    assert not again.reads


def test_author_md_lists_every_candidate_or_says_there_is_none():
    one = {"tensor": "out", "accesses": [{"where": "k.py:9: tl.store(out + o, v)", "args": ["out"]}]}
    assert "`k.py:9`: `tl.store(out + o, v)` (its pointer derives from `out`)" in "\n".join(joined_lines(one, "store"))
    two = {"tensor": "y", "accesses": [{"where": "k.py:5: tl.load(y + o)", "args": ["y"]},
                                       {"where": "k.py:7: tl.load(p)", "args": ["y", "x"]}]}
    text = "\n".join(joined_lines(two, "load"))
    assert "2 unmasked tl.loads take their pointer from `y`" in text and "`k.py:7`" in text and "`y`, `x`" in text
    none = "\n".join(joined_lines({"tensor": "out", "accesses": []}, "store"))
    assert "No unmasked tl.store in the kernel's own source takes its pointer from `out`" in none
    # a record from before the join keeps the old list of every unmasked access
    old = {"status": "failed", "oob": {"writes": [{"tensor": "out", "unmasked_stores": ["k.py:9: tl.store(o, v)"]}]}}
    assert "k.py:9: tl.store(o, v)" in "\n".join(oob_section(old))


def _ascend() -> bool:
    try:
        importlib.metadata.version("triton-ascend")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(_ascend(), reason="upstream triton's interpreter (nox -s tests)")
def test_author_md_under_the_interpreter_names_the_access_the_red_zone_caught(tmp_path):
    kernels = _kernels()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:cacheprovider",
         "--backend=interpret", "--kernels=tests.planted_oob_join", f"--results-dir={tmp_path}", "-n", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=900, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    records = {r["kernel"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}

    def author(kernel: str) -> str:
        r = records[kernel]
        assert r["repro"], r.get("repro_error")
        return (tmp_path / r["repro"] / "AUTHOR.md").read_text()

    def named(text: str, kernel, code: str) -> bool:
        return f"planted_oob_join.py:{_line_of(kernel, code)}`" in text

    text = author("join_masked_and_unmasked_load")
    k = kernels.masked_and_unmasked_kernel
    assert "read past argument `y`" in text and named(text, k, "tl.load(y + o)")
    assert not named(text, k, "tl.load(x + o, mask")  # control: the masked load
    text, k = author("join_two_unmasked_loads"), kernels.two_unmasked_kernel
    assert named(text, k, "tl.load(p_y)") and not named(text, k, "tl.load(w + o)")  # control: w stayed in bounds
    text, k = author("join_store"), kernels.store_kernel
    assert named(text, k, "tl.store(out + o") and not named(text, k, "tl.store(aux + o")
    text = author("join_helper_store")
    assert "No unmasked tl.store in the kernel's own source takes its pointer from `out`" in text
    assert "planted_oob_join.py:" not in text.split("## What failed")[0]  # no guess
