"""Record and replay (parity.record): each checker with a planted fault it catches and a clean twin it passes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

pytest.importorskip("safetensors", reason="record bundles need safetensors: pip install safetensors")

from parity.backends import get_backend
from parity.record import bundle as fmt
from parity.record.capture import WorkloadRecorder
from parity.record.replay import specs_from_bundle
from parity.results import OwnerKind, Status
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from parity.triage.owner import make_owner

KERNEL_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def copy_scaled(x, y, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) * alpha, mask=m)


def timing_runs(kernel_call, quantiles):
    kernel_call()  # a timing run writes the outputs, as Triton's do_bench does on a device
    return [1.0, 1.0, 1.0]


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"],
                 do_bench=timing_runs)
@triton.jit
def tuned_double(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) * 2, mask=m)


@triton.jit
def halve_bits(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs, mask=m) >> 1, mask=m)


@triton.jit
def cat_reorder(x, y, z, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(z + tl.arange(0, 2 * BLOCK), tl.cat(tl.load(x + offs), tl.load(y + offs), can_reorder=True))


@triton.jit
def writes_nothing(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)
'''
PLANTED = "    tl.store(y + offs, tl.load(x + offs, mask=m) * alpha, mask=m)\n"
PLANTED_BUG = ("    tl.store(y + offs, tl.where(offs == 7, -1.0, tl.load(x + offs, mask=m) * alpha)"
               ".to(y.dtype.element_ty), mask=m)\n")


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """A kernel module of the recording session, importable while recording, gone at replay (as for a user
    whose kernels live beside their script): replay then rebuilds the kernel from the captured source."""
    name = f"rec_kernels_{abs(hash(tmp_path)) % 10**8}"
    src = tmp_path / "src"
    src.mkdir()
    (src / f"{name}.py").write_text(KERNEL_SOURCE)
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))
    module = __import__(name)
    yield module
    sys.modules.pop(name, None)


def record(root: Path, launches, keep: int = 2) -> fmt.Bundle:
    fmt.write_header(root, ["test"], {"keep": keep}, {})
    rec = WorkloadRecorder(root, keep=keep)
    rec.install()
    try:
        launches()
    finally:
        rec.uninstall()
    return fmt.load_bundle(root)


def copy_launches(mod, shapes=(100,), repeats=1):
    def go() -> None:
        for _ in range(repeats):
            for n in shapes:
                x = torch.arange(n, dtype=torch.float32)
                # NaN, not torch.empty: reused memory may already hold x * 2, and a launch that changes no
                # byte has nothing to compare (it replays as "not checked")
                y = torch.full((n,), float("nan"), dtype=torch.float32)
                mod.copy_scaled[(triton_cdiv(n, 32),)](x, y, n, 2.0, BLOCK=32)
    return go


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def forget(mod) -> None:
    """Make the recording's module unimportable, so replay takes the captured source."""
    sys.modules.pop(mod.__name__, None)
    sys.path[:] = [p for p in sys.path if not Path(p, f"{mod.__name__}.py").exists()]


def replay(root: Path) -> list[dict]:
    backend = get_backend("interpret")
    out = []
    for spec in specs_from_bundle(root):
        for case in spec.cases("quick"):
            record_, _ = run_case(spec, case, backend, seed=0, cache=ReferenceCache(enabled=False))
            out.append(record_)
    return out


# ---------------------------------------------------------------- dedupe


@pytest.mark.parametrize("keep", [1, 2, 3])
def test_dedupe_keeps_exactly_n_per_key_and_counts_the_rest(tmp_path, kernels, keep):
    b = record(tmp_path / "b", copy_launches(kernels, shapes=(100, 64), repeats=5), keep=keep)
    per_key: dict[str, int] = {}
    for e in b.launches:
        per_key[e["key"]] = per_key.get(e["key"], 0) + 1
    assert sorted(per_key.values()) == [keep, keep]  # two shapes, `keep` each: never more, never fewer
    assert sum(b.dropped().values()) == 2 * (5 - keep)
    seen = {k: v["seen"] for c in b.counts for k, v in c["keys"].items()}
    assert sorted(seen.values()) == [5, 5]


def test_a_spent_budget_stops_keeping_and_says_so_the_launches_still_run(tmp_path, kernels, capsys):
    ys = []

    def go() -> None:
        for n in (100, 200, 300):
            x, y = torch.ones(n), torch.empty(n)
            kernels.copy_scaled[(triton_cdiv(n, 32),)](x, y, n, 3.0, BLOCK=32)
            ys.append(y)

    fmt.write_header(tmp_path / "b", ["test"], {}, {})
    rec = WorkloadRecorder(tmp_path / "b", budget_bytes=2000)
    rec.install()
    try:
        go()
    finally:
        rec.uninstall()
    b = fmt.load_bundle(tmp_path / "b")
    assert len(b.launches) == 1 and "budget" in (b.counts[0]["stopped"] or "")
    assert "stopped keeping launches" in capsys.readouterr().err
    assert all(bool((y == 3.0).all()) for y in ys)  # the command ran to the end


def test_a_launch_over_the_budget_is_never_serialized_or_written(tmp_path, kernels, monkeypatch):
    written: list[int] = []
    real = fmt.write_tensors

    def counted(root, launch_id, tensors):
        written.append(sum(t.nbytes for t in tensors.values()))
        return real(root, launch_id, tensors)

    monkeypatch.setattr(fmt, "write_tensors", counted)
    fmt.write_header(tmp_path / "b", ["test"], {}, {})
    rec = WorkloadRecorder(tmp_path / "b", budget_bytes=4000)
    rec.install()
    try:
        for n in (100, 100_000):  # x, y before and y after: 1,200 bytes, then 1.2 MB, over the budget
            x, y = torch.ones(n), torch.empty(n)
            kernels.copy_scaled[(triton_cdiv(n, 32),)](x, y, n, 3.0, BLOCK=32)
    finally:
        rec.uninstall()
    assert written == [1200]  # the control: the small launch was written; the large one never reached write_tensors
    b = fmt.load_bundle(tmp_path / "b")
    assert len(b.launches) == 1 and "the next launch needs 1200000" in (b.counts[0]["stopped"] or "")
    assert not list((tmp_path / "b").rglob("*.tmp"))


# ---------------------------------------------------------------- autotuned launches


def tuned_launches(mod):
    def go() -> None:
        x = torch.arange(100, dtype=torch.float32)
        y = torch.full((100,), float("nan"), dtype=torch.float32)
        mod.tuned_double[lambda meta: (triton_cdiv(100, meta["BLOCK"]),)](x, y, 100)
    return go


def test_an_autotuned_launch_keeps_the_bytes_from_before_the_tuners_timing_runs(tmp_path, kernels):
    """The timing runs write the output before the launch that is recorded (fla's tuned kernels on the H200 all
    read "not checked"); the bytes from before the first timing run stand for the launch's inputs."""
    b = record(tmp_path / "b", tuned_launches(kernels))
    (entry,) = b.launches
    assert entry["outputs"] and entry["autotune"]["configs"] == 2
    forget(kernels)
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "passed", r["reason"]


def test_without_the_pre_tuning_bytes_an_autotuned_launch_changes_nothing(tmp_path, kernels, monkeypatch):
    """Negative control: with the timing runs' hook passing straight through (as before the fix), the same launch
    has no output to compare."""
    def untimed(self, inner, *a, **k):  # the timing runs still paused out of the recording, no bytes kept first
        self.local.paused = getattr(self.local, "paused", 0) + 1
        try:
            return inner(*a, **k)
        finally:
            self.local.paused -= 1

    monkeypatch.setattr(WorkloadRecorder, "_paused", untimed)
    b = record(tmp_path / "b", tuned_launches(kernels))
    (entry,) = b.launches
    assert entry["outputs"] == []


# ---------------------------------------------------------------- TensorWrapper (triton.reinterpret)


def wrapped_launches(mod):
    """Upstream test_core's way with unsigned dtypes: int32 tensors read as uint32 through triton.reinterpret.
    Values with the top bit set, so an unsigned shift (logical) and a signed one (arithmetic) differ."""
    def go() -> None:
        import triton
        import triton.language as tl

        x = torch.tensor([-2, -8, 6, -(1 << 30), 7] * 8, dtype=torch.int32)
        y = torch.full_like(x, 123)
        mod.halve_bits[(2,)](triton.reinterpret(x, tl.uint32), triton.reinterpret(y, tl.uint32), x.numel(), BLOCK=32)
    return go


def test_a_launch_through_a_tensor_wrapper_is_recorded_by_its_base_and_replays(tmp_path, kernels):
    b = record(tmp_path / "b", wrapped_launches(kernels))
    assert not b.unrecorded, b.unrecorded  # the wrapper used to stop the recording ("not a plain literal")
    (entry,) = b.launches
    assert entry["args"][0] == {"tensor": "t0", "reinterpret": "uint32"}
    assert entry["views"]["t0"]["dtype"] == "int32"  # the base tensor, by storage
    forget(kernels)
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "passed", r["reason"]


def test_a_replay_that_drops_the_wrappers_dtype_fails(tmp_path, kernels):
    """Negative control: the same bundle with the reinterpretation removed from the manifest reads int32, whose
    shift is arithmetic: the replay must fail, so the wrapper's dtype is what made the clean twin agree."""
    record(tmp_path / "b", wrapped_launches(kernels))
    forget(kernels)
    (manifest,) = (tmp_path / "b").glob("manifest-*.jsonl")
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    for line in lines:
        for arg in line.get("args", []):
            assert arg.pop("reinterpret", "uint32") == "uint32"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "failed", r["reason"]


def test_keys_read_a_tensor_wrapper_as_the_dtype_the_kernel_sees():
    import triton
    import triton.language as tl

    from parity.record.keys import arg_shape_key, arg_spec_key

    x = torch.zeros(16, dtype=torch.int32)
    wrapped = triton.reinterpret(x, tl.uint32)
    assert arg_spec_key(wrapped, False) == "*uint32a" != arg_spec_key(x, False)  # two binaries in Triton too
    assert arg_shape_key(wrapped).startswith("Tuint32(16,)(1,)")


def test_launch_args_reads_a_tensor_wrapper_through_its_base():
    """triton-ascend 3.2's TensorWrapper.stride takes a required index, so `value.stride()` raised on it."""
    from parity.backends.ascend.perf_hook import launch_args

    class TensorWrapper:  # as triton-ascend 3.2 defines it: stride(i) only
        def __init__(self, base, dtype):
            self.base, self.dtype, self.shape = base, dtype, base.shape

        def stride(self, i):
            return self.base.stride(i)

        def element_size(self):
            return self.base.element_size()

    base = torch.zeros((4, 6), dtype=torch.int8)[:, :5]
    got = launch_args(["x", "n"], [TensorWrapper(base, "fp8e4nv"), 5])
    assert got["tensors"]["x"] == {"dtype": "fp8e4nv", "itemsize": 1, "shape": [4, 5], "stride": [6, 1]}
    assert got["scalars"] == {"n": 5}


# ---------------------------------------------------------------- replay verdicts


def test_replay_passes_a_clean_recording(tmp_path, kernels):
    record(tmp_path / "b", copy_launches(kernels, shapes=(100, 40)))
    forget(kernels)
    records = replay(tmp_path / "b")
    assert [r["status"] for r in records] == ["passed", "passed"], [r["reason"] for r in records]
    assert records[0]["tolerance"]["reason"]  # the tolerance is stated


def test_a_planted_wrong_element_fails_on_that_element(tmp_path, kernels):
    record(tmp_path / "b", copy_launches(kernels))
    forget(kernels)
    (source,) = (tmp_path / "b" / "sources").glob("*.py")
    text = source.read_text()
    assert PLANTED in text
    source.write_text(text.replace(PLANTED, PLANTED_BUG))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "failed"
    assert r["metrics"]["worst_index"] in ([7], (7,), "7", "(7,)", 7), r["metrics"]["worst_index"]
    assert r["metrics"]["mismatch_frac"] == pytest.approx(1 / 100)


def tamper_output(bundle_dir: Path, b, dtype: torch.dtype, change) -> None:
    """Rewrite the first launch's recorded output in place: `change` edits it viewed as `dtype`; its manifest line
    gets the new file's digests, as if a device had computed those values (an unsigned change is the bundle's
    error: tests/test_bad_bundle.py)."""
    from safetensors.torch import load_file, save

    path = bundle_dir / b.launches[0]["tensors"]
    tensors = load_file(path)
    (key,) = [k for k in tensors if k.startswith("after.")]
    values = tensors[key].view(dtype).clone()
    change(values)
    tensors[key] = values.view(torch.uint8)
    data = save(tensors)
    path.write_bytes(data)
    (manifest,) = bundle_dir.glob(fmt.MANIFEST_GLOB)
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    for e in lines:
        if e.get("id") == b.launches[0]["id"]:
            e.update(bytes=len(data), **fmt.digests(data))
    manifest.write_text("".join(json.dumps(e) + "\n" for e in lines))


def test_a_tampered_recorded_output_is_caught(tmp_path, kernels):
    b = record(tmp_path / "b", copy_launches(kernels))
    forget(kernels)
    tamper_output(tmp_path / "b", b, torch.float32, lambda floats: floats.__setitem__(42, floats[42] + 1.0))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "failed" and "42" in str(r["metrics"]["worst_index"])


def half_launches(mod):
    def go() -> None:
        x = torch.linspace(-3, 3, 100, dtype=torch.float16)
        y = torch.full((100,), float("nan"), dtype=torch.float16)
        mod.copy_scaled[(4,)](x, y, 100, 1.5, BLOCK=32)
    return go


@pytest.mark.parametrize("shift, status", [(2 * 2.0**-10, "passed"), (0.25, "failed")])
def test_fp16_replays_allow_ulps_of_the_terms_and_catch_more(tmp_path, kernels, shift, status):
    """Two devices' fp16 answers differ by ulps of the terms (rounded products, fused on the other device): an
    element off by 2 ulps of a unit-size term agrees; the twin, off by 0.25, is caught on that element."""
    b = record(tmp_path / "b", half_launches(kernels))
    forget(kernels)
    tamper_output(tmp_path / "b", b, torch.float16, lambda halves: halves.__setitem__(17, halves[17] + shift))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == status, r["reason"]
    assert r["tolerance"]["atol"] == 4 * 2.0**-10 and "ulps of the terms" in r["tolerance"]["reason"]
    if status == "failed":
        assert "17" in str(r["metrics"]["worst_index"])


@pytest.mark.parametrize("scale, status", [(1 + 4e-6, "passed"), (1 + 1e-4, "failed")])
def test_fp32_replays_allow_two_devices_transcendentals_and_catch_more(tmp_path, kernels, scale, status):
    """Two devices' fp32 exp/sigmoid differ by ulps of each term: an element 4e-6 off relative agrees (torch's
    rtol, 1.3e-6, failed it); the twin, 1e-4 off, is caught on that element."""
    b = record(tmp_path / "b", copy_launches(kernels))
    forget(kernels)
    tamper_output(tmp_path / "b", b, torch.float32, lambda floats: floats.__setitem__(42, floats[42] * scale))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == status, r["reason"]
    assert r["tolerance"]["rtol"] == 1e-5 and "transcendental" in r["tolerance"]["reason"]
    if status == "failed":
        assert "42" in str(r["metrics"]["worst_index"])


def _entry(outputs: dict[str, str], inputs: dict[str, str]) -> dict:
    views = {f"t{i}": {"buffer": b, "dtype": d} for i, (b, d) in enumerate({**outputs, **inputs}.items())}
    return {"outputs": list(outputs), "views": views}


def test_a_launch_is_judged_at_the_loosest_float_it_reads_or_writes():
    from parity.record.replay import judged_at

    assert judged_at(_entry({"b0": "float32"}, {"b1": "float16", "b2": "int32"})) == "fp16"  # fp16 q.k into fp32
    assert judged_at(_entry({"b0": "float32"}, {"b1": "float32", "b2": "int32"})) == "fp32"  # the clean twin
    assert judged_at(_entry({"b0": "int32"}, {"b1": "float16"})) == "int"  # integer outputs stay exact
    assert judged_at(_entry({}, {"b1": "float16"})) == "bytes"


def test_a_launch_that_changed_nothing_is_not_checked_never_passed(tmp_path, kernels):
    def go() -> None:
        x = torch.ones(64)
        kernels.writes_nothing[(2,)](x, 64, BLOCK=32)

    record(tmp_path / "b", go)
    forget(kernels)
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "skipped" and r["reason"].startswith("not checked")


INLINE_ASM = ("    tl.store(y + offs, tl.inline_asm_elementwise(\"mov.b32 $0, $1;\", \"=r,r\", [tl.load(x + offs, "
              "mask=m)], dtype=tl.float32, is_pure=True, pack=1), mask=m)\n")
TYPO = "    tl.store(y + offs, tl.lod(x + offs, mask=m) * alpha, mask=m)\n"


@pytest.mark.parametrize("planted, status", [(None, "passed"), (INLINE_ASM, "skipped"), (TYPO, "error")])
def test_a_launch_needing_a_device_api_is_not_replayable_here_never_a_failure(tmp_path, kernels, planted, status):
    """A GPU kernel's inline asm cannot run under the interpreter: "not replayable here" with the reason.
    Controls: the clean kernel passes, and a kernel bug (a misspelled tl.load) stays an error, not a skip."""
    record(tmp_path / "b", copy_launches(kernels))
    forget(kernels)
    if planted:
        (source,) = (tmp_path / "b" / "sources").glob("*.py")
        source.write_text(source.read_text().replace(PLANTED, planted))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == status, r["reason"]
    if status == "skipped":
        assert r["reason"].startswith("not replayable here") and "inline_asm" in r["reason"]


def test_a_launch_option_of_another_backend_is_not_replayable_here():
    from parity.record.replay import device_only

    entry = {"options": {"multibuffer": True}}
    npu_option = KeyError("Keyword argument multibuffer was specified but unrecognised")
    reason = device_only(npu_option, entry)
    assert reason and reason.startswith("not replayable here") and "multibuffer=True" in reason
    # controls: an argument the recording did not pass as an option, and any other error, stay failures
    assert device_only(KeyError("Keyword argument BLOCK was specified but unrecognised"), entry) is None
    assert device_only(ValueError("unsupported rmwOp"), entry) is None


# ---------------------------------------------------------------- bad input


def test_a_corrupt_tensor_file_is_one_error_naming_it_and_the_others_replay(tmp_path, kernels):
    b = record(tmp_path / "b", copy_launches(kernels, shapes=(100, 40)))
    forget(kernels)
    broken = tmp_path / "b" / b.launches[1]["tensors"]
    broken.write_bytes(broken.read_bytes()[:50])
    records = replay(tmp_path / "b")
    assert records[0]["status"] == "passed"
    assert records[1]["status"] == "error" and str(broken) in records[1]["reason"]


def test_a_bundle_holding_a_pickle_is_refused(tmp_path, kernels):
    import pickle

    record(tmp_path / "b", copy_launches(kernels))
    fmt.load_bundle(tmp_path / "b")  # the clean twin loads
    evil = tmp_path / "b" / "tensors" / "extra.safetensors"
    evil.write_bytes(pickle.dumps({"x": 1}))
    with pytest.raises(fmt.BundleError, match=r"extra\.safetensors: holds a pickle"):
        fmt.load_bundle(tmp_path / "b")
    evil.unlink()
    (tmp_path / "b" / "tensors" / "weights.pt").write_bytes(b"PK\x03\x04rest")
    with pytest.raises(fmt.BundleError, match=r"weights\.pt"):
        fmt.load_bundle(tmp_path / "b")


def test_a_safetensors_file_whose_header_length_reads_as_pickle_magic_loads(tmp_path, kernels):
    """A safetensors header 0x280 bytes long starts with 80 02, a pickle's magic (FlagGems' recording wrote 5 such
    files of 1,158): it is a tensor file, not a pickle. A real pickle of the same first bytes is still refused."""
    import pickle

    import torch
    from safetensors.torch import save_file

    record(tmp_path / "b", copy_launches(kernels))
    name = "t" * (0x280 - 80)  # pads the header's JSON to a length whose low bytes are 80 02
    for pad in range(0, 200):
        path = tmp_path / "b" / "tensors" / "extra.safetensors"
        save_file({name + "x" * pad: torch.zeros(1)}, str(path))
        if path.read_bytes()[:2] == b"\x80\x02":
            break
    assert path.read_bytes()[:2] == b"\x80\x02", "the planted header length was not reached"
    fmt.refuse_foreign_files(tmp_path / "b")  # loads: a tensor file
    path.write_bytes(pickle.dumps({"x": 1}, protocol=2))
    with pytest.raises(fmt.BundleError, match="holds a pickle"):
        fmt.refuse_foreign_files(tmp_path / "b")


def test_a_newer_schema_is_a_clear_error(tmp_path, kernels):
    record(tmp_path / "b", copy_launches(kernels))
    header = json.loads((tmp_path / "b" / fmt.HEADER).read_text())
    header["schema"] = fmt.SCHEMA + 1
    (tmp_path / "b" / fmt.HEADER).write_text(json.dumps(header))
    with pytest.raises(fmt.BundleError, match=rf"schema {fmt.SCHEMA + 1}, newer than this parity reads"):
        fmt.load_bundle(tmp_path / "b")


def test_a_truncated_manifest_line_is_skipped_by_name(tmp_path, kernels):
    record(tmp_path / "b", copy_launches(kernels, shapes=(100, 40)))
    (manifest,) = (tmp_path / "b").glob(fmt.MANIFEST_GLOB)
    lines = manifest.read_text().splitlines()
    launch_lines = [i for i, line in enumerate(lines) if '"type": "launch"' in line]
    lines[launch_lines[-1]] = lines[launch_lines[-1]][:40]  # a recording cut mid-line
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match=rf"{manifest.name}:\d+: not a complete JSON line"):
        b = fmt.load_bundle(tmp_path / "b")
    assert len(b.launches) == 1


def test_a_kernel_whose_source_cannot_be_recovered_is_recorded_with_the_reason(tmp_path, kernels):
    from parity.record.capture import kernel_identity

    fn = kernels.copy_scaled
    info = kernel_identity(fn, tmp_path)
    assert info.get("source") and "source_error" not in info  # the clean twin

    class Opaque:  # no Python function under it
        fn = None

    info = kernel_identity(Opaque(), tmp_path)
    assert "source_error" in info and "Opaque" in info["source_error"]


def test_a_kernel_neither_importable_nor_captured_replays_as_a_skip_with_the_reason(tmp_path, kernels):
    b = record(tmp_path / "b", copy_launches(kernels))
    forget(kernels)
    (manifest,) = (tmp_path / "b").glob(fmt.MANIFEST_GLOB)
    lines = []
    for line in manifest.read_text().splitlines():
        entry = json.loads(line)
        if entry["type"] == "launch":
            entry["kernel"].pop("source")
            entry["kernel"]["source_error"] = "planted: the source was not kept"
        lines.append(json.dumps(entry))
    manifest.write_text("\n".join(lines) + "\n")
    assert b.launches
    (spec,) = specs_from_bundle(tmp_path / "b")
    assert spec.unavailable is not None
    assert "does not import here" in spec.unavailable() and "planted" in spec.unavailable()


# ---------------------------------------------------------------- the command


SLEEPER = '''
import sys, time
import torch
sys.path.insert(0, {src!r})
from {mod} import copy_scaled
x = torch.ones(64); y = torch.empty(64)
copy_scaled[(2,)](x, y, 64, 2.0, BLOCK=32)
print("launched", flush=True)
time.sleep(60)
'''


def test_ctrl_c_while_recording_keeps_a_valid_bundle(tmp_path, kernels):
    import os
    import signal
    import subprocess

    script = tmp_path / "sleeper.py"
    script.write_text(SLEEPER.format(src=str(Path(kernels.__file__).parent), mod=kernels.__name__))
    out = tmp_path / "bundle"
    proc = subprocess.Popen([sys.executable, "-m", "parity", "record", "--out", str(out), "--", sys.executable,
                             str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=Path(__file__).resolve().parents[1],
                            # children inherit an ignored SIGINT (a shell's background job, or a worker where an
                            # earlier test left it ignored: CI failed so); this test plays a terminal's Ctrl-C
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the launch was recorded before this line
        assert line.strip() == "launched", (line, proc.stderr.read() if proc.poll() is not None else "")
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    b = fmt.load_bundle(out)
    assert len(b.launches) == 1 and b.counts, err  # the process wrote its counts on the way out
    assert "1 launch(es) of 1 kernel(s) kept" in err


def test_a_kernel_whose_source_was_rewritten_at_run_time_records_the_running_source(tmp_path, kernels):
    from triton.runtime.jit import JITFunction

    from parity.record.capture import kernel_identity

    clean = JITFunction(kernels.copy_scaled.fn)  # as Triton's test_core builds kernels from a template
    info = kernel_identity(clean, tmp_path)
    assert "rewritten" not in info
    assert "* alpha * 2" not in (tmp_path / info["source"]).read_text()
    patched = JITFunction(kernels.copy_scaled.fn)
    patched._unsafe_update_src(patched.src.replace("* alpha", "* alpha * 2"))
    info2 = kernel_identity(patched, tmp_path)
    assert "rewritten" in info2 and info2["source_hash"] != info["source_hash"]
    assert "* alpha * 2" in (tmp_path / info2["source"]).read_text()


def test_the_verdict_says_a_replay_compares_with_the_recording_not_fp64():
    from parity.report.verdict import check_name

    assert "fp64" in check_name("interpret", {})  # the clean twin: a spec run
    replayed = check_name("interpret", {"replay": "reports/bundle"})
    assert "fp64" not in replayed and "recorded" in replayed


def test_a_replay_on_the_tier_that_recorded_it_is_no_evidence_for_triage():
    from parity.triage.decide import decide
    from parity.triage.evidence import others_in

    failing = {"backend": "ascend-lowered", "kernel": "k", "case": "launch=0", "status": "failed",
               "suite": "accuracy", "replay": {"recorded_on": "interpret"}}
    self_replay = {"backend": "interpret", "kernel": "k", "case": "launch=0", "status": "passed",
                   "suite": "accuracy", "replay": {"recorded_on": "interpret"}}
    independent = {**self_replay, "backend": "cuda-compile"}  # the clean twin: another tier's replay counts
    others = others_in(failing, [self_replay, independent])
    # it stands only as a run to its end ("ran"): no rule takes it for a pass of the values
    assert others == {"cuda-compile": independent, "interpret": {**self_replay, "status": "ran"}}
    owner = decide({**failing, "metrics": {"err_ratio": 0.5}, "reason": "output 'o': wrong"}, others, "")
    assert owner is not None and owner.who is OwnerKind.AUTHOR and owner.provisional  # as without it: no pass counted
    assert "interpret pass" not in owner.evidence
    assert others_in(failing, [{**self_replay, "status": "failed"}]) == {}  # a failing self-replay says nothing


def test_a_launch_line_naming_a_file_outside_the_bundle_is_skipped(tmp_path, kernels):
    record(tmp_path / "b", copy_launches(kernels, shapes=(100, 40)))
    (manifest,) = (tmp_path / "b").glob(fmt.MANIFEST_GLOB)
    lines, changed = [], False
    for line in manifest.read_text().splitlines():
        entry = json.loads(line)
        if entry["type"] == "launch" and not changed:
            entry["kernel"]["source"], changed = "sources/../../evil.py", True
        lines.append(json.dumps(entry))
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match=r"evil\.py.*not a file of this bundle"):
        b = fmt.load_bundle(tmp_path / "b")
    assert len(b.launches) == 1  # the other launch, whose files are the bundle's, still loads


def test_a_full_disk_stops_keeping_launches_and_the_command_runs_on(tmp_path, kernels, monkeypatch, capsys):
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    ys = []

    def go() -> None:
        for n in (100, 200):
            x, y = torch.ones(n), torch.empty(n)
            kernels.copy_scaled[(triton_cdiv(n, 32),)](x, y, n, 3.0, BLOCK=32)
            ys.append(y)

    monkeypatch.setattr(fmt, "write_tensors", full)
    b = record(tmp_path / "b", go)
    assert not b.launches and "No space left" in (b.counts[0]["stopped"] or "")
    assert "stopped keeping launches" in capsys.readouterr().err
    assert all(bool((y == 3.0).all()) for y in ys)


def test_replay_imports_the_kernel_from_its_module_or_says_it_rebuilt_it(tmp_path, kernels):
    from parity.record.replay import ORIGINS, selected

    record(tmp_path / "b", copy_launches(kernels))
    (spec,), provenance = selected(str(tmp_path / "b"), [])
    assert ORIGINS[spec.name] == "module" and provenance["recorded_on"] == "interpret"
    forget(kernels)
    (spec,), provenance = selected(str(tmp_path / "b"), [])
    assert ORIGINS[spec.name].startswith("captured source (") and "does not import here" in ORIGINS[spec.name]
    assert provenance["kernel_from"] == {spec.name: ORIGINS[spec.name]}


def test_the_summary_names_each_disagreements_owner_and_each_skips_reason():
    from parity.record.summary import tier_cell

    clean = [{"status": Status.PASSED, "mode": "run"}] * 2
    assert tier_cell(clean) == "2 replayed, 2 agree"
    mixed = [*clean, {"status": Status.FAILED, "mode": "run",
                      "owner": make_owner(OwnerKind.LIBRARY, "L", "e", provisional=True)},
             {"status": Status.SKIPPED, "mode": "run", "reason": "not checked: nothing changed"}]
    cell = tier_cell(mixed)
    assert "1 disagree (1× library (provisional))" in cell and "1 not replayable (not checked" in cell
    # a known limit met is said with its id (it used to leave "0 agree" and nothing else); the control: none met
    known = [{"status": Status.XFAILED, "mode": "run",
              "owner": make_owner(OwnerKind.TIER, "T", "e", limit="interpret-float-arg")}] * 2
    assert tier_cell(known) == "2 replayed, 0 agree, 2 known limit (2× interpret-float-arg)"
    assert "known limit" not in tier_cell(clean)


def test_a_replays_report_speaks_per_kernel_and_module_with_compiles_on_the_arch(tmp_path, kernels):
    from parity.record.replay import selected
    from parity.record.summary import report_sections

    record(tmp_path / "b", copy_launches(kernels, shapes=(100, 100, 100, 40)))  # one launch dropped by dedupe
    (spec,), _ = selected(str(tmp_path / "b"), [])
    records = [{"kernel": spec.name, "suite": "compile", "status": Status.PASSED, "mode": "compile", "compiles": 2},
               {"kernel": spec.name, "suite": "compile", "status": Status.FAILED, "mode": "compile", "compiles": 1,
                "owner": make_owner(OwnerKind.TRITON_ASCEND, "triton-ascend", "e")}]
    env = {"backend": "ascend-compile", "target_arch": "Ascend910B3"}
    ((title, body),) = report_sections(records, env, str(tmp_path / "b"))
    assert title == "Recorded workload" and "Recorded under the interpreter" in body, body
    assert "compiles on Ascend910B3" in body and "ascend-compile: agreement" in body
    # 4 launches seen (the dropped one counted), 1 specialization (n=100 and n=40 are both plain i32), 3 compiles
    row = next(line for line in body.splitlines() if line.startswith(f"| {spec.name} |"))
    assert row.endswith("| 4 | 1 | 3 | 2 replayed, 1 agree, 1 disagree (1× triton-ascend), 3 compiles |"), row
    assert f"| {kernels.__name__} | 1 | 4 | 1 | 3 | 2 replayed, 1 agree, 1 disagree" in body


def test_the_recording_says_plainly_whether_it_ran_under_the_interpreter():
    from types import SimpleNamespace

    from parity.record.summary import recorded_under

    def says(*envs):
        return recorded_under(SimpleNamespace(processes=[{"env": e} for e in envs]))

    assert says({"interpret": True}).startswith("Recorded under the interpreter")
    assert says({"interpret": False, "device": "NVIDIA H200"}) == \
        "Recorded without the interpreter on NVIDIA H200 (1 recording process(es))."
    assert "in 1 of 2" in says({"interpret": True}, {"interpret": False, "device": "NVIDIA H200"})


def test_record_refuses_a_pytest_command_that_would_load_paritys_own_conftest(tmp_path, monkeypatch, capsys):
    """The H200 lesson: a workload's tests run from inside the parity checkout take parity's pyproject as
    rootdir, load its plugin and run under the interpreter. Controls: the workload's own pytest.ini, a
    directory outside parity, and a command that is not pytest are all recorded."""
    from parity.record import command

    root = tmp_path / "parity"
    inside, own = root / "work" / "fla", root / "work" / "liger"
    for d in (inside, own):
        d.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (own / "pytest.ini").write_text("[pytest]\n")
    monkeypatch.setattr(command, "PARITY_ROOT", root)
    pytest_cmd = ["python", "-m", "pytest", "tests"]
    assert "loads parity's conftest" in (command.parity_conftest_clash(pytest_cmd, inside) or "")
    assert command.parity_conftest_clash(["pytest", "-x"], root) is not None
    assert command.parity_conftest_clash(pytest_cmd, own) is None
    assert command.parity_conftest_clash(pytest_cmd, tmp_path) is None
    assert command.parity_conftest_clash(["python", "fwd.py"], inside) is None
    monkeypatch.chdir(inside)
    assert command.main(["--out", str(tmp_path / "b"), "--", *pytest_cmd]) == 2
    err = capsys.readouterr().err
    assert "refused" in err and "--allow-parity-conftest" in err and not (tmp_path / "b").exists()


def test_a_compile_tier_rejecting_the_recorded_backends_launch_option_is_not_replayable_here(tmp_path, kernels):
    """An NPU-only option recorded with the launch, rejected by upstream's launcher on cuda-compile: the compile
    record is skipped with the reason. Control: a compile error of the kernel itself stays a failure."""
    from parity.run.compile_judge import compile_records

    def go() -> None:
        x, y = torch.arange(64.0), torch.full((64,), float("nan"))
        kernels.copy_scaled[(2,)](x, y, 64, 2.0, BLOCK=32, multibuffer=True)  # the interpreter ignores it

    record(tmp_path / "b", go)
    (spec,) = specs_from_bundle(tmp_path / "b")
    (case,) = spec.cases("quick")
    base = {"kernel": "copy_scaled", "variant": {}, "config": {}, "ok": False, "stage_reached": None}
    rejected = {**base, "error_kind": "launch_option",
                "message": "KeyError: 'Keyword argument multibuffer was specified but unrecognised'"}
    broken = {**base, "error_kind": "CompilationError", "message": "at 3:4: unsupported tensor index"}
    skipped, failed = compile_records("cuda-compile", spec, case, [rejected, broken])
    assert skipped["status"] == "skipped" and skipped["reason"].startswith("not replayable here: launch option "
                                                                           "multibuffer=True")
    assert failed["status"] == "failed"


def test_a_compile_tier_launch_that_cannot_replay_here_is_skipped_never_owned(tmp_path, kernels, monkeypatch):
    """A replayed launch raising NotReplayable on a compile tier (a pointer table into no recorded tensor) is a
    skip with the reason, never an `error` a triage hands to an owner. Control: any other raise stays an error."""
    from types import SimpleNamespace

    from parity.driver import pipeline
    from parity.record.replay import NotReplayable

    record(tmp_path / "b", copy_launches(kernels))
    (spec,) = specs_from_bundle(tmp_path / "b")
    (case,) = spec.cases("quick")
    monkeypatch.setattr(pipeline, "judge_and_repro_prelaunch", lambda record, *a, **k: record.setdefault("owner", 1))
    monkeypatch.setattr(pipeline, "triage", lambda *a: None)
    written: list[dict] = []

    def raising(exc):
        def compile_case(*a):
            raise exc
        return SimpleNamespace(name="cuda-compile", compile_case=compile_case)

    def session(exc):
        return SimpleNamespace(backend=raising(exc), seed=0, results_dir=tmp_path / "r", store=written.append)

    (skipped,) = pipeline.compile_case(session(NotReplayable("not replayable here: pointer table(s)")), spec, case)
    (error,) = pipeline.compile_case(session(RuntimeError("the launcher broke")), spec, case)
    assert skipped["status"] == "skipped" and skipped["reason"].startswith("not replayable here")
    assert "owner" not in skipped and error["status"] == "error" and error.get("owner") is not None  # triaged


# ---------------------------------------------------------------- typed pointers (FlagGems' StridedBuffer)


class StridedBuffer:
    """As FlagGems 5.0.2 defines it (flag_gems/utils/tensor_wrapper.py): a base tensor with a dtype, shape,
    strides and element offset of its own, which Triton reads through `data_ptr()` and `dtype` alone."""

    def __init__(self, base, shape, strides, offset=0):
        self._base, self.dtype, self.offset = base, base.dtype, offset
        self.shape, self._strides, self.device = tuple(shape), tuple(strides), base.device
        self._data_ptr = base.data_ptr() + offset * base.element_size()

    def stride(self):
        return self._strides

    def unwrap(self):
        return self._base

    def data_ptr(self):
        return self._data_ptr

    def untyped_storage(self):
        return self._base.untyped_storage()


def strided_launches(mod, offset=8):
    """FlagGems' generated pointwise wrappers launch through StridedBuffers: here x read from element `offset` on.
    The interpreter cannot run one (it asks it for `new_empty`); FlagGems runs it on a device, stood in for here by
    a seam layer under the recorder's that hands the interpreter the torch view the buffer stands for."""
    def as_views(inner, self_, *args, **kwargs):
        from parity.repro.tensorlike import typed_pointer_view

        def plain(v):
            typed = typed_pointer_view(v)
            return typed[0] if typed is not None else v
        return inner(self_, *map(plain, args), **{k: plain(v) for k, v in kwargs.items()})

    def go() -> None:
        from parity.seams.jit import interpreted_run, jit_run

        seam = interpreted_run() or jit_run()
        undo = seam.add(as_views)
        try:
            launch()
        finally:
            undo()

    def launch() -> None:
        base = torch.arange(64, dtype=torch.float32)
        y = torch.full((40,), float("nan"), dtype=torch.float32)
        x = StridedBuffer(base, (40,), (1,), offset=offset)
        mod.copy_scaled[(2,)](x, StridedBuffer(y, (40,), (1,)), 40, 2.0, BLOCK=32)
    return go


def test_a_launch_through_a_strided_buffer_is_recorded_as_a_view_of_its_base_and_replays(tmp_path, kernels):
    b = record(tmp_path / "b", strided_launches(kernels))
    assert not b.unrecorded, b.unrecorded  # a StridedBuffer used to stop the recording ("not a plain literal")
    (entry,) = b.launches
    x = entry["views"][entry["args"][0]["tensor"]]
    assert (x["dtype"], x["shape"], x["stride"], x["offset"]) == ("float32", [40], [1], 8)  # the base, 8 elements in
    assert len(entry["outputs"]) == 1
    forget(kernels)
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "passed", r["reason"]


def test_a_replay_that_loses_the_strided_buffers_offset_fails(tmp_path, kernels):
    """Negative control: the same bundle with x's offset set to 0 reads the base's first elements, which differ
    from what the recorded launch read: the replay must fail, so the offset is what made the clean twin agree."""
    record(tmp_path / "b", strided_launches(kernels))
    forget(kernels)
    (manifest,) = (tmp_path / "b").glob("manifest-*.jsonl")
    lines = [json.loads(line) for line in manifest.read_text().splitlines()]
    for line in lines:
        if line.get("type") == "launch":
            line["views"][line["args"][0]["tensor"]]["offset"] = 0
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "failed", r["reason"]


def test_keys_read_a_strided_buffer_as_the_view_it_stands_for():
    """Before: `StridedBuffer:<object at 0x...>`, a new dedupe key (and specialization) for every launch."""
    from parity.record.keys import arg_shape_key, arg_spec_key

    base = torch.zeros(64, dtype=torch.float32)
    one, two = StridedBuffer(base, (40,), (1,), 8), StridedBuffer(base.clone(), (40,), (1,), 8)
    assert arg_shape_key(one) == arg_shape_key(two) == arg_shape_key(base[8:48])
    assert arg_spec_key(one, False) == arg_spec_key(base[8:48], False) == "*float32a"  # 32 bytes in: 16-aligned
    assert arg_spec_key(StridedBuffer(base, (40,), (1,), 3), False) == "*float32u"


def test_a_negative_stride_keeps_the_whole_storage():
    """FlagGems' flip reads backwards from its address: no torch view has that, so one element at the address
    stands for it and the buffer is kept whole (how far the kernel reads is unknown)."""
    from parity.repro.capture import LaunchRecorder

    base = torch.arange(16, dtype=torch.float32)
    rec = LaunchRecorder()
    ref = rec.value(StridedBuffer(base, (16,), (-1,), offset=15))
    (buf,) = rec.buffers.values()
    (slot,) = rec.views.values()
    assert ref == f"T[{slot.key!r}]" and (slot.shape, slot.offset) == ((1,), 15)
    assert buf.whole and buf.kept == (0, 64)


def test_a_command_that_never_reaches_triton_says_nothing_was_recorded_and_its_exit_status(tmp_path):
    """A conftest's import error ended Liger's tests before any launch: the summary must say so, not speak of
    where launches ran."""
    import subprocess

    out = tmp_path / "b"
    proc = subprocess.run([sys.executable, "-m", "parity", "record", "--out", str(out), "--", sys.executable, "-c",
                           "import no_such_module_here"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "nothing was recorded" in proc.stderr and "exit status 1" in proc.stderr
    assert "where the launches ran" not in proc.stderr.lower()


def cat_launches(mod):
    def go() -> None:
        x, y = torch.arange(16, dtype=torch.float32), torch.arange(16, 32, dtype=torch.float32)
        mod.cat_reorder[(1,)](x, y, torch.full((32,), float("nan")), BLOCK=16)
    return go


def swap(values: torch.Tensor) -> None:
    values[[3, 20]] = values[[20, 3]]


@pytest.mark.parametrize("change, status", [(swap, "passed"), (lambda v: v.__setitem__(5, v[5] + 1.0), "failed")])
def test_a_kernel_that_lets_the_compiler_reorder_is_compared_as_sorted_values(tmp_path, kernels, change, status):
    """Upstream's test_cat: tl.cat(can_reorder=True) lets each device order the elements, so a recording in another
    order agrees, and a changed value still fails."""
    b = record(tmp_path / "b", cat_launches(kernels))
    forget(kernels)
    tamper_output(tmp_path / "b", b, torch.float32, change)
    (r,) = replay(tmp_path / "b")
    assert r["status"] == status, r["reason"]
    assert "can_reorder" in r["tolerance"]["reason"]


def test_an_ordered_kernels_output_in_another_order_fails(tmp_path, kernels):
    """The negative control: without can_reorder=True the order is part of the answer."""
    b = record(tmp_path / "b", copy_launches(kernels))
    forget(kernels)
    tamper_output(tmp_path / "b", b, torch.float32, swap)
    (r,) = replay(tmp_path / "b")
    assert r["status"] == "failed" and "can_reorder" not in r["tolerance"]["reason"]
