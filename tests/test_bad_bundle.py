"""A damaged replay bundle is never a pass and never the kernel's: each tampering (manifest removed or unreadable,
one byte flipped in a tensor file, a tensor file truncated) is an error owned by "bundle", and the run exits
nonzero; a good bundle still replays and passes, and an old one without digests loads and says "not verified"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("safetensors", reason="record bundles need safetensors: pip install safetensors")

from parity.backends import get_backend
from parity.record import bundle as fmt
from parity.record.capture import WorkloadRecorder
from parity.record.replay import selected, specs_from_bundle
from parity.report.findings import owner_words
from parity.report.verdict import owner_tag
from parity.results import OwnerKind, Status, read_records
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from parity.spec import SpecError
from parity.triage import drafts
from parity.triage.decide import decide
from parity.triage.owner import make_owner

ROOT = Path(__file__).resolve().parents[1]
KERNEL_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def double_it(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) * 2.0, mask=m)
'''


@pytest.fixture
def bundle_dir(tmp_path, monkeypatch) -> Path:
    """Two launches of a small kernel recorded under the interpreter, its module gone at replay (the captured
    source replays)."""
    name = f"bad_bundle_kernels_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / f"{name}.py").write_text(KERNEL_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))
    module = __import__(name)
    root = tmp_path / "bundle"
    fmt.write_header(root, ["test"], {"keep": 2}, {})
    rec = WorkloadRecorder(root, keep=2)
    rec.install()
    try:
        for n in (100, 40):
            y = torch.full((n,), float("nan"))
            module.double_it[(-(-n // 32),)](torch.arange(n, dtype=torch.float32), y, n, BLOCK=32)
    finally:
        rec.uninstall()
    sys.modules.pop(name, None)
    sys.path[:] = [p for p in sys.path if p != str(tmp_path / "src")]
    return root


def replay(root: Path) -> list[dict]:
    backend = get_backend("interpret")
    return [run_case(spec, case, backend, seed=0, cache=ReferenceCache(enabled=False))[0]
            for spec in specs_from_bundle(root) for case in spec.cases("quick")]


def second_file(root: Path) -> Path:
    return root / fmt.load_bundle(root).launches[1]["tensors"]


def flip_output_byte(path: Path) -> None:
    """One bit of the recorded output's stored bytes (found by the safetensors header's offsets), flipped."""
    data = bytearray(path.read_bytes())
    n = int.from_bytes(data[:8], "little")
    start = 8 + n + json.loads(data[8:8 + n])["after.b1"]["data_offsets"][0]
    data[start + 5] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_good_bundle_carries_a_digest_per_tensor_and_replays(bundle_dir):
    b = fmt.load_bundle(bundle_dir)
    for launch in b.launches:
        data = (bundle_dir / launch["tensors"]).read_bytes()
        assert launch["sha256"] and launch["tensor_sha256"] and fmt.digests(data) == {
            "sha256": launch["sha256"], "tensor_sha256": launch["tensor_sha256"]}
    assert b.verified().startswith("checked against the sha256")
    assert [r["status"] for r in replay(bundle_dir)] == ["passed", "passed"]


def test_one_flipped_byte_is_the_bundles_error_and_the_other_launch_still_replays(bundle_dir):
    broken = second_file(bundle_dir)
    flip_output_byte(broken)
    first, second = replay(bundle_dir)
    assert first["status"] == "passed"
    assert second["status"] == "error" and second["error_kind"] == "bundle"
    assert str(broken) in second["reason"] and "changed: after.b1" in second["reason"]
    owner = decide(second, {}, "")
    assert owner is not None and owner.who is OwnerKind.BUNDLE and not owner.provisional
    assert owner_tag(owner) == "bundle: re-record" and "re-record" in owner_words(owner)
    assert "kernel" not in owner_tag(owner)
    name, text = drafts.input_note({**second, "owner": owner}, "interpret") or ("", "")
    assert name == "BUNDLE.md" and "Record the workload again" in text
    assert drafts.plan_drafts({**second, "owner": owner}).kind != "vendor"


def test_a_truncated_tensor_file_is_the_bundles_error(bundle_dir):
    broken = second_file(bundle_dir)
    broken.write_bytes(broken.read_bytes()[:-16])
    first, second = replay(bundle_dir)
    assert first["status"] == "passed"
    assert second["status"] == "error" and second["error_kind"] == "bundle" and "truncated" in second["reason"]
    owner = decide(second, {}, "")
    assert owner is not None and owner.who is OwnerKind.BUNDLE


def test_a_changed_output_with_matching_digests_is_still_the_comparisons_failure(bundle_dir):
    """Control: the digests take nothing from the comparison: bytes a recording really wrote (digests updated, as a
    device that computed them would have) that differ from the kernel's answer still fail as a mismatch."""
    broken = second_file(bundle_dir)
    flip_output_byte(broken)
    data = broken.read_bytes()
    manifest = next(bundle_dir.glob(fmt.MANIFEST_GLOB))
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    for e in lines:
        if e.get("tensors") == f"{fmt.TENSORS}/{broken.name}":
            e.update(fmt.digests(data))
    manifest.write_text("".join(json.dumps(e) + "\n" for e in lines))
    second = replay(bundle_dir)[1]
    assert second["status"] == "failed" and second.get("error_kind") is None


def test_a_missing_or_unreadable_manifest_stops_loading_with_the_path_and_the_fix(bundle_dir):
    (manifest,) = bundle_dir.glob(fmt.MANIFEST_GLOB)
    text = manifest.read_bytes()
    manifest.write_bytes(b"\xff\xfe" + text)
    with pytest.raises(fmt.BundleError, match=rf"{manifest.name}: the manifest cannot be read .*parity record"):
        fmt.load_bundle(bundle_dir)
    manifest.unlink()
    with pytest.raises(fmt.BundleError, match=r"no manifest-\*\.jsonl .*parity record --out"):
        fmt.load_bundle(bundle_dir)
    with pytest.raises(SpecError, match=rf"--replay {bundle_dir}: .*no manifest"):
        selected(str(bundle_dir), [])
    manifest.write_bytes(text)  # control: the same bundle with its manifest back loads
    assert len(fmt.load_bundle(bundle_dir).launches) == 2


def test_a_bundle_recorded_before_digests_loads_replays_and_says_not_verified(bundle_dir):
    manifest = next(bundle_dir.glob(fmt.MANIFEST_GLOB))
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    manifest.write_text("".join(json.dumps({k: v for k, v in e.items() if k not in ("sha256", "tensor_sha256")})
                                + "\n" for e in lines))
    b = fmt.load_bundle(bundle_dir)
    assert b.verified() == fmt.NOT_VERIFIED
    assert [r["status"] for r in replay(bundle_dir)] == ["passed", "passed"]
    second_file(bundle_dir).write_bytes(second_file(bundle_dir).read_bytes()[:50])  # corrupt: still caught on parse
    assert replay(bundle_dir)[1]["error_kind"] == "bundle"


def _run(tier: str, bundle: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRITON_INTERPRET": "1"} if tier == "interpret" else \
        {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    return subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:cacheprovider", "-n", "0",
                           f"--backend={tier}", f"--replay={bundle}", f"--results-dir={out}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("tier", ["interpret", "cuda-compile"])
def test_a_run_over_a_damaged_bundle_exits_nonzero_with_the_bundle_as_owner(bundle_dir, tmp_path, tier):
    if tier == "cuda-compile":
        pytest.importorskip("triton.backends.nvidia", reason="cuda-compile needs upstream triton's nvidia backend")
    good = _run(tier, bundle_dir, tmp_path / "good")
    assert good.returncode == 0, good.stdout[-2000:]  # control: the good bundle replays and passes
    flip_output_byte(second_file(bundle_dir))
    proc = _run(tier, bundle_dir, tmp_path / "flip")
    assert proc.returncode == 1 and "✗ bundle: re-record #1" in proc.stdout, proc.stdout[-2000:]
    records = list(read_records(tmp_path / "flip" / "results.jsonl"))  # typed: each owner an Owner
    assert [r["status"] for r in records] == [Status.PASSED, Status.ERROR]
    assert records[1]["owner"].who is OwnerKind.BUNDLE
    repro = tmp_path / "flip" / records[1]["repro"]
    assert sorted(p.name for p in repro.iterdir()) == ["BUNDLE.md"]  # no AUTHOR.md, no ISSUE.md, no repro.py
    next(bundle_dir.glob(fmt.MANIFEST_GLOB)).unlink()
    gone = _run(tier, bundle_dir, tmp_path / "gone")
    assert gone.returncode not in (0, 5) and "no manifest-*.jsonl" in gone.stdout + gone.stderr
    assert str(bundle_dir) in gone.stdout + gone.stderr


def test_the_summary_counts_a_damaged_launch_as_not_replayed_never_as_a_disagreement():
    from parity.record.summary import tier_cell

    ok = {"status": Status.PASSED, "mode": "interpret"}
    damaged = {"status": Status.ERROR, "mode": "interpret", "error_kind": fmt.BundleError.parity_error_kind,
               "owner": make_owner(OwnerKind.BUNDLE, "replay bundle", "e")}
    wrong = {"status": Status.FAILED, "mode": "interpret", "owner": make_owner(OwnerKind.AUTHOR, "A", "e")}
    assert tier_cell([ok, damaged]) == "1 replayed, 1 agree, 1 not replayed: bundle file damaged, re-record"
    assert tier_cell([ok, wrong]) == "2 replayed, 1 agree, 1 disagree (1× author)"  # control
