"""`--shard K/N` (parity.driver.shard) and `parity merge` (parity.report.shards): a tier split over 3 shards and merged
reports what one run reports, case for case, and an incomplete or mixed set of shards is refused."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from parity import cli
from parity.driver import shard
from parity.report.shards import MergeError, merge
from parity.results import Status
from parity.spec import KernelSpec
from tests.synthetic_records import rec

ROOT = Path(__file__).resolve().parents[1]
KERNELS = "vector_add,row_gather,tril_mask,matmul"  # cheap on the interpreter; matmul adds known (xfailed) cases
# what differs between two runs of the same cases: wall-clock timings (of each case's phases) and, under xdist, the
# worker that ran a case; nothing else
VARIES = ("timing", "worker")


@pytest.mark.parametrize(("value", "words"), [("0/3", "1..N"), ("3/2", "1..N"), ("x", "K/N"), ("1/0", "1..N"),
                                              ("2", "K/N"), ("1/3/4", "K/N")])
def test_bad_shards_name_the_form(value, words):
    with pytest.raises(argparse.ArgumentTypeError, match=words) as err:
        shard.parse_shard(value)
    assert "--shard 2/3" in str(err.value)


def test_a_shard_parses_and_prints_as_given():
    assert shard.parse_shard(" 2/3 ") == shard.Shard(2, 3) and str(shard.Shard(2, 3)) == "2/3"


def test_kernels_are_split_whole_deterministically_and_by_weight():
    weights = {"a": 10, "b": 9, "c": 1, "d": 1, "e": 1, "f": 0}
    shares = shard.assign(weights, 3)
    assert sorted(k for s in shares for k in s) == sorted(weights)  # every kernel on exactly one shard
    assert shares == shard.assign(dict(reversed(list(weights.items()))), 3)  # not the order they come in
    loads = [sum(max(weights[k], 1) for k in s) for s in shares]
    assert max(loads) - min(loads) <= 6 and shares[0] == ["a"] and shares[1] == ["b"]


def specs_named(*names: str) -> list[KernelSpec]:
    specs = [KernelSpec.__new__(KernelSpec) for _ in names]
    for s, name in zip(specs, names, strict=True):
        object.__setattr__(s, "name", name)
    return specs


def shares(specs: list[KernelSpec], count: int) -> list[list[str]]:
    return [[s.name for s in shard.select(specs, shard.Shard(k, count), lambda s: 1)] for k in range(1, count + 1)]


def test_select_keeps_the_given_order_and_every_kernel_lands_on_exactly_one_shard():
    picked = shares(specs_named("x", "y", "z"), 3)
    assert sorted(k for share in picked for k in share) == ["x", "y", "z"] and all(picked)
    many = specs_named(*(f"k{i:02d}" for i in range(40)))
    picked = shares(many, 12)
    assert sorted(k for share in picked for k in share) == [s.name for s in many]  # each once
    assert all(picked) and max(map(len, picked)) - min(map(len, picked)) <= 1  # many kernels: no shard idle
    assert all(share == sorted(share) for share in picked)  # in the order given


def test_one_kernel_over_twelve_shards_runs_on_one_and_the_other_eleven_hold_none():
    assert shares(specs_named("only"), 12) == [["only"], *([[]] * 11)]
    picked = shares(specs_named("x", "y", "z"), 4)
    assert sorted(map(len, picked)) == [0, 1, 1, 1]


def run_tier(out: Path, *extra: str, kernels: str = KERNELS) -> str:
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:cacheprovider",
                           "--backend=interpret", f"--kernels={kernels}", f"--results-dir={out}", "-n", "0", *extra],
                          cwd=ROOT, env={**os.environ, "TRITON_INTERPRET": "1"}, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def comparable(results_dir: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (results_dir / "results.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in VARIES} for r in records]


def report(results_dir: Path, out: Path) -> tuple[bytes, bytes]:
    assert cli.main(["report", str(results_dir), "--out", str(out / "DIVERGENCE.md")]) == 0
    return (out / "DIVERGENCE.md").read_bytes(), (out / "index.html").read_bytes()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("shards")
    run_tier(root / "one" / "interpret")
    shards = [root / f"shard{k}" / "interpret" for k in (1, 2, 3)]
    for k, d in enumerate(shards, 1):
        run_tier(d, f"--shard={k}/3")
    return root / "one" / "interpret", shards


def test_three_shards_merged_equal_one_run(runs, tmp_path):
    one, shards = runs
    kernels = [json.loads((d / "env.json").read_text())["shard_kernels"] for d in shards]
    assert sorted(k for ks in kernels for k in ks) == sorted(KERNELS.split(","))  # each kernel on one shard
    merged = tmp_path / "merged" / "interpret"
    assert cli.main(["merge", str(merged), *map(str, reversed(shards))]) == 0
    assert comparable(merged) == comparable(one)  # case for case, in the same order
    env = json.loads((merged / "env.json").read_text())
    assert [s["shard"] for s in env["merged_shards"]] == ["3/3", "2/3", "1/3"] and "shard" not in env
    # the same dir name under another root: the reports' relative links and labels agree, so the files must too
    assert report(merged, tmp_path / "merged") == report(one, tmp_path / "one")


def test_a_missing_shard_is_refused_and_the_comparison_sees_it(runs, tmp_path):
    """Negative control: two of three shards are not the run, and both the merge and the comparison say so."""
    one, shards = runs
    with pytest.raises(MergeError, match="shard\\(s\\) 2/3 missing"):
        merge(tmp_path / "m", [shards[0], shards[2]])
    partial = [r for d in (shards[0], shards[2]) for r in comparable(d)]
    assert sorted(partial, key=lambda r: (r["kernel"], r["case"], r.get("suite") or "")) != comparable(one)


def write_dir(d: Path, env: dict[str, Any], records: list[dict[str, Any]]) -> Path:
    d.mkdir(parents=True)
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (d / "env.json").write_text(json.dumps(env))
    return d


def test_mixed_tiers_overlaps_and_a_used_out_dir_are_refused(tmp_path, capsys):
    base = {"backend": "interpret", "level": "quick", "seed": 0, "triton": "3.8.0"}
    a = write_dir(tmp_path / "a", {**base, "shard": "1/2"}, [rec("interpret", "interpret", "k1", "N=1", Status.PASSED)])
    b = write_dir(tmp_path / "b", {**base, "shard": "2/2", "triton": "3.2.0"},
                  [rec("interpret", "interpret", "k2", "N=1", Status.PASSED)])
    with pytest.raises(MergeError, match="'triton'"):
        merge(tmp_path / "out", [a, b])
    c = write_dir(tmp_path / "c", {**base, "backend": "cuda-compile", "shard": "2/2"},
                  [rec("cuda-compile", "compile", "k2", "N=1", Status.PASSED)])
    assert cli.main(["merge", str(tmp_path / "out"), str(a), str(c)]) == 2
    assert "'backend'" in capsys.readouterr().err and not (tmp_path / "out").exists()
    d = write_dir(tmp_path / "d", {**base, "shard": "2/2"}, [rec("interpret", "interpret", "k1", "N=1", Status.PASSED)])
    with pytest.raises(MergeError, match="in both"):
        merge(tmp_path / "out", [a, d])
    e = write_dir(tmp_path / "e", {**base, "shard": "2/2"}, [rec("interpret", "interpret", "k2", "N=1", Status.PASSED)])
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("")
    with pytest.raises(MergeError, match="not empty"):
        merge(tmp_path / "used", [a, e])
    assert "merged 2 dir(s), 2 records" in merge(tmp_path / "out", [e, a])  # the control: a right pair merges


def test_repro_folders_and_stored_outputs_come_along_and_a_clash_is_refused(tmp_path):
    base = {"backend": "interpret", "level": "quick", "seed": 0}
    a = write_dir(tmp_path / "a", {**base, "shard": "1/2"},
                  [rec("interpret", "interpret", "k1", "N=1", Status.FAILED, repro="repros/k1__N=1")])
    b = write_dir(tmp_path / "b", {**base, "shard": "2/2"}, [rec("interpret", "interpret", "k2", "N=1", Status.PASSED)])
    (a / "repros" / "k1__N=1").mkdir(parents=True)
    (a / "repros" / "k1__N=1" / "repro.py").write_text("raise SystemExit(1)\n")
    (b / "outputs").mkdir()
    (b / "outputs" / "k2__N=1.npz").write_bytes(b"npz")
    merge(tmp_path / "out", [a, b])
    assert (tmp_path / "out" / "repros" / "k1__N=1" / "repro.py").read_text() == "raise SystemExit(1)\n"
    assert (tmp_path / "out" / "outputs" / "k2__N=1.npz").read_bytes() == b"npz"
    assert "merged_shards" in json.loads((tmp_path / "out" / "env.json").read_text())
    assert (tmp_path / "out" / "REPORT.md").read_text().startswith("# parity report: interpret")
    (a / "outputs").mkdir()
    (a / "outputs" / "k2__N=1.npz").write_bytes(b"other")  # the same path with other bytes: not one run's shards
    with pytest.raises(MergeError, match="differs"):
        merge(tmp_path / "out2", [a, b])
    assert not (tmp_path / "out2").exists() and not list(tmp_path.glob(".out2*"))  # nothing half-merged is left


def test_a_shard_with_no_kernel_passes_says_so_and_merges_as_an_empty_share(tmp_path):
    """One kernel over 12 shards, as a CI matrix of 12 runs it: shard 1 runs it; shard 12 (like 2..11) runs
    nothing, exits 0 with a note and writes a results dir; all 12 merge into shard 1's records. Controls: the
    empty shards do not stand in for a missing one, and the kernel's shard still runs its cases."""
    out = run_tier(tmp_path / "s12", "--shard=12/12", kernels="vector_add")
    assert "--shard 12/12: no kernel falls to this shard (1 kernel(s) selected for 12 shards" in out
    env = json.loads((tmp_path / "s12" / "env.json").read_text())
    assert (env["shard"], env["shard_kernels"]) == ("12/12", [])
    assert (tmp_path / "s12" / "results.jsonl").read_text() == ""
    run_tier(tmp_path / "s1", "--shard=1/12", kernels="vector_add")
    assert comparable(tmp_path / "s1") and {r["kernel"] for r in comparable(tmp_path / "s1")} == {"vector_add"}
    empties = []
    for k in range(2, 12):  # shards 2..11 are shard 12's run with their own share: the same empty dir
        d = tmp_path / f"s{k}"
        shutil.copytree(tmp_path / "s12", d)
        (d / "env.json").write_text(json.dumps({**env, "shard": f"{k}/12"}))
        empties.append(d)
    dirs = [tmp_path / "s1", *empties, tmp_path / "s12"]
    with pytest.raises(MergeError, match="shard\\(s\\) 5/12 missing"):
        merge(tmp_path / "partial", [d for d in dirs if d.name != "s5"])
    assert "merged 12 dir(s)" in merge(tmp_path / "merged", dirs)
    assert comparable(tmp_path / "merged") == comparable(tmp_path / "s1")
