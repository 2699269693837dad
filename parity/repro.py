"""Standalone repros for failing cases: repro.py, inputs.npz and ISSUE.md per case.

On a failed or errored case the case is first shrunk (parity.shrink), then run once
more while every kernel launch is recorded: the grid, every argument and every
keyword (constexprs, the heuristic values and the autotune config actually used).
From that record a script is generated that imports only torch, triton and numpy
(and torch_npu where present): the kernel source with its helpers, the recorded
launches, the inputs (inputs.npz), the fp64 reference (its plain torch source, or
saved arrays when the source cannot stand alone) and the check. It exits 1 and
prints the mismatch while the bug is present, and 0 once it is fixed.
"""

from __future__ import annotations

import ast
import functools
import inspect
import string
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from parity import autotune_pin
from parity import inputs as inp
from parity.outputs_store import case_filename
from parity.shrink import ShrinkResult, shrink
from parity.source import Extracted, SourceError, extract_function, extract_kernel, literal, python_function
from parity.spec import Case, KernelSpec

REPRO_STATUSES = ("failed", "error")
REPROS_DIR = "repros"
NUMPY_DTYPES = (torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
                torch.uint8, torch.bool)


class ReproError(RuntimeError):
    """A repro cannot be generated for this case; the message says what stood in the way."""


# ---------------------------------------------------------------- launch capture


@dataclass
class TensorSlot:
    """One distinct tensor seen by the recorded launches, with its value before the first one."""

    key: str
    live: torch.Tensor  # held so its memory cannot be reused by another tensor mid-capture
    initial: torch.Tensor  # CPU copy of the storage span it covers
    dtype: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    contiguous: bool

    @property
    def spec_literal(self) -> str:
        return literal((self.dtype, self.shape, self.stride, self.contiguous))


@dataclass
class Launch:
    kernel: Any
    grid: tuple[int, ...]
    args: list[str]  # source expressions
    kwargs: dict[str, str]
    warmup: bool


def _identity(t: torch.Tensor) -> tuple[Any, ...]:
    return (t.data_ptr(), str(t.dtype), tuple(t.shape), tuple(t.stride()), t.device.type)


def _span(t: torch.Tensor) -> torch.Tensor:
    """The elements of t's storage that t can reach, as a flat CPU copy."""
    if t.is_contiguous():
        return t.detach().reshape(-1).cpu().clone()
    n = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True)) if t.numel() else 0
    return t.detach().as_strided((n,), (1,), t.storage_offset()).cpu().clone()


@dataclass
class LaunchRecorder:
    """Context manager: records every Triton launch (and warmup) made inside it.

    Patches `run` on the JIT and interpreter classes. Inside an Autotuner only its
    last launch is kept: the ones before it are the benchmark runs.
    """

    launches: list[Launch] = field(default_factory=list)
    slots: dict[tuple[Any, ...], TensorSlot] = field(default_factory=dict)
    _undo: list[tuple[type, Callable[..., Any]]] = field(default_factory=list)

    def tensor(self, t: torch.Tensor) -> str:
        ident = _identity(t)
        slot = self.slots.get(ident)
        if slot is None:
            slot = TensorSlot(key=f"t{len(self.slots)}", live=t, initial=_span(t), dtype=str(t.dtype).split(".")[-1],
                              shape=tuple(t.shape), stride=tuple(t.stride()), contiguous=t.is_contiguous())
            self.slots[ident] = slot
        return f"T[{slot.key!r}]"

    def value(self, v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        kind = type(v).__name__
        if kind == "constexpr":
            return self.value(v.value)
        if kind == "dtype" and type(v).__module__.startswith("triton"):
            return f"tl.dtype({literal(str(v))})"
        try:
            return literal(v)
        except SourceError as exc:
            raise ReproError(f"a kernel argument cannot be written into a script: {exc}") from None

    def record(self, kernel: Any, args: tuple[Any, ...], grid: Any, warmup: bool, kwargs: dict[str, Any]) -> None:
        if callable(grid):
            names = getattr(kernel, "arg_names", None) or list(inspect.signature(python_function(kernel)).parameters)
            grid = grid({**dict(zip(names, args, strict=False)), **kwargs})
        grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        self.launches.append(Launch(kernel, grid, [self.value(a) for a in args],
                                    {k: self.value(v) for k, v in kwargs.items()}, bool(warmup)))

    def _patch(self, cls: type) -> None:
        original = cls.run
        recorder = self

        def run(self_: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            recorder.record(self_, args, grid, warmup, dict(kwargs))
            return original(self_, *args, grid=grid, warmup=warmup, **kwargs)

        cls.run = run  # type: ignore[method-assign]
        self._undo.append((cls, original))

    def _patch_autotuner(self, cls: type) -> None:
        original = cls.run
        recorder = self

        def run(self_: Any, *args: Any, **kwargs: Any) -> Any:
            start = len(recorder.launches)
            try:
                return original(self_, *args, **kwargs)
            finally:
                del recorder.launches[start:-1]  # keep only the launch with the chosen config

        cls.run = run  # type: ignore[method-assign]
        self._undo.append((cls, original))

    def __enter__(self) -> LaunchRecorder:
        from triton.runtime import autotuner, jit

        self._patch(jit.JITFunction)
        try:
            from triton.runtime.interpreter import InterpretedFunction

            self._patch(InterpretedFunction)
        except ImportError:  # forks without the interpreter
            pass
        self._patch_autotuner(autotuner.Autotuner)
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, original in reversed(self._undo):
            cls.run = original  # type: ignore[method-assign]
        self._undo.clear()

    def slot_of(self, t: torch.Tensor) -> TensorSlot | None:
        """The captured tensor an output lives in: the same one, or a same-sized view of it."""
        slot = self.slots.get(_identity(t))
        if slot is not None:
            return slot
        return next((s for s in self.slots.values() if s.live.data_ptr() == t.data_ptr() and s.contiguous
                     and t.is_contiguous() and s.live.numel() == t.numel() and str(t.dtype).endswith(s.dtype)), None)


# ---------------------------------------------------------------- one captured case


@dataclass
class Captured:
    """Everything a repro needs, from one recorded run of a (shrunk) case."""

    spec: KernelSpec
    params: dict[str, Any]
    launches: list[Launch]
    slots: list[TensorSlot]
    outputs: dict[str, tuple[str, tuple[int, ...]]]  # output name -> (slot key, shape)
    inputs: dict[str, Any]  # the spec's CPU inputs, for the reference
    reference: dict[str, torch.Tensor]
    valid: dict[str, torch.Tensor]
    tolerance: dict[str, Any]
    error: str | None
    metrics: dict[str, Any] | None = None  # the captured run against the reference (worst output)


def _as_outputs(value: Any) -> dict[str, torch.Tensor]:
    return {"out": value} if isinstance(value, torch.Tensor) else dict(value or {})


def capture_case(spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any) -> Captured:
    """Run the case once with launch recording on; it must go through at least one kernel launch."""
    from parity.compare import worst_of
    from parity.runner import build_inputs, compare_outputs, error_text, reference_outputs

    cpu_inputs = build_inputs(spec, case, seed)
    ref = reference_outputs(spec, case, cpu_inputs, cache)
    error, outputs = None, {}
    # the config the accuracy pass pinned, so the repro records the launch that failed
    with LaunchRecorder() as rec, autotune_pin.pinned_case(spec, case.params):
        try:
            outputs = _as_outputs(spec.launch(inp.to_device(cpu_inputs, backend.device), case.params))
            backend.synchronize()
        except Exception as exc:
            error = error_text(exc)
    if not rec.launches:
        raise ReproError(f"{spec.name}[{case.id}]: no Triton launch was recorded"
                         + (f" before the error ({error})" if error else "") + "; nothing to reproduce")
    mapped: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, tensor in outputs.items():
        if name not in ref:
            continue
        slot = rec.slot_of(tensor)
        if slot is None:
            raise ReproError(f"{spec.name}: output {name!r} is not a buffer any kernel launch received (the "
                             "launcher computes it afterwards), so a launch-only repro cannot check it")
        mapped[name] = (slot.key, tuple(tensor.shape))
    valid = {}
    for name, r in ref.items():
        mask = spec.valid(name, case.params, r.shape) if spec.valid else None
        if mask is not None:
            valid[name] = mask.to(torch.bool).expand(r.shape).contiguous()
    tol = spec.tolerance_for(case.params)
    metrics = None
    if error is None and set(ref) <= set(outputs):
        cpu_outputs = {k: v.detach().cpu() for k, v in outputs.items()}
        metrics = worst_of(compare_outputs(spec, case, cpu_outputs, ref, tol)).as_dict()
    return Captured(spec=spec, params=dict(case.params), launches=rec.launches, slots=list(rec.slots.values()),
                    outputs=mapped, inputs=dict(cpu_inputs), reference=ref, valid=valid, tolerance=tol.as_dict(),
                    error=error, metrics=metrics)


# ---------------------------------------------------------------- arrays and script


def _np(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu().contiguous()
    if t.dtype not in NUMPY_DTYPES:  # bf16, fp8: store the bits, the script views them back
        t = t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t.numpy()


def arrays_of(cap: Captured, embed_reference: bool) -> dict[str, np.ndarray]:
    arrays = {slot.key: _np(slot.initial) for slot in cap.slots}
    arrays.update({f"input.{k}": _np(v) for k, v in cap.inputs.items() if isinstance(v, torch.Tensor)})
    arrays.update({f"valid.{k}": _np(v) for k, v in cap.valid.items()})
    if not embed_reference:
        arrays.update({f"ref.{k}": _np(v.to(torch.float64)) for k, v in cap.reference.items()})
    return arrays


def kernel_sources(launches: list[Launch]) -> Extracted:
    merged: Extracted | None = None
    for launch in launches:
        part = extract_kernel(launch.kernel)
        if merged is None:
            merged = part
        else:
            merged.merge(part)
    assert merged is not None
    return merged


def launch_lines(launches: list[Launch]) -> list[str]:
    lines = []
    for launch in launches:
        name = python_function(launch.kernel).__name__
        args = [*launch.args, *(f"{k}={v}" for k, v in launch.kwargs.items())]
        if launch.warmup:
            lines.append(f"    {name}.warmup({', '.join(args)}, grid={literal(launch.grid)})")
        else:
            lines.append(f"    {name}[{literal(launch.grid)}]({', '.join(args)})")
    return lines


def render_script(cap: Captured, title: str) -> tuple[str, dict[str, np.ndarray]]:
    """repro.py's text and the arrays for inputs.npz."""
    kernels = kernel_sources(cap.launches)
    try:
        reference: Extracted | None = extract_function(cap.spec.reference)
    except SourceError:
        reference = None
    sources = Extracted(entry=kernels.entry)
    sources.merge(kernels)
    if reference is not None:
        sources.merge(reference)
    scalars = {k: v for k, v in cap.inputs.items() if not isinstance(v, torch.Tensor)}
    text = SCRIPT.substitute(
        title=title,
        imports="\n".join(f"{line}  # noqa: E402" for line in dict.fromkeys(sources.imports.values())
                          if line not in ("import triton", "import triton.language as tl")),
        source=Extracted(entry="", constants=sources.constants, functions=sources.functions).text().rstrip(),
        params=literal(cap.params),
        tolerance=literal({k: cap.tolerance[k] for k in ("rtol", "atol", "max_err_ratio")}),
        tensors="{" + ", ".join(f"{s.key!r}: {s.spec_literal}" for s in cap.slots) + "}",
        input_dtypes=literal({k: str(v.dtype).split(".")[-1] for k, v in cap.inputs.items()
                              if isinstance(v, torch.Tensor)}),
        scalar_inputs=literal(scalars),
        outputs=literal({k: [slot, list(shape)] for k, (slot, shape) in cap.outputs.items()}),
        launches="\n".join(launch_lines(cap.launches)),
        reference_call=(f"{reference.entry}(fp64_inputs, PARAMS)" if reference is not None
                        else "saved_reference(data)"),
        expect_error=literal(cap.error is not None),
    )
    return text, arrays_of(cap, reference is not None)


# ---------------------------------------------------------------- the repro directory


def failure_signature(record: Mapping[str, Any]) -> tuple[str, str]:
    """What must stay the same while shrinking: the status, and for errors the exception type."""
    status = record.get("status") or ""
    reason = record.get("reason") or ""
    return status, (reason.split(":", 1)[0].strip() if status == "error" else "")


def shrink_case(spec: KernelSpec, case: Case, backend: Any, record: Mapping[str, Any], *, seed: int,
                cache: Any, max_trials: int = 32, max_seconds: float = 120.0) -> ShrinkResult:
    from parity.runner import run_case

    want = failure_signature(record)

    def still_fails(params: dict[str, Any]) -> bool:
        rec, _ = run_case(spec, Case(params), backend, seed=seed, cache=cache)
        return failure_signature(rec) == want

    return shrink(dict(case.params), still_fails, max_trials=max_trials, max_seconds=max_seconds)


def write_repro(out_dir: Path, cap: Captured, record: Mapping[str, Any], shrunk: ShrinkResult,
                env: Mapping[str, Any], backend: str) -> Path:
    """Write repro.py, inputs.npz and both ISSUE variants into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    case_id = Case(cap.params).id
    title = f"{cap.spec.name} [{case_id}] on {backend}"
    script, arrays = render_script(cap, title)
    (out_dir / "repro.py").write_text(script, encoding="utf-8")
    if arrays:
        np.savez_compressed(out_dir / "inputs.npz", **arrays)
    primary = "triton-ascend" if backend.startswith("ascend") else "triton"
    for tracker in TRACKERS:
        name = "ISSUE.md" if tracker == primary else f"ISSUE-{tracker}.md"
        text = render_issue(tracker, cap_summary(cap), record, shrunk.as_dict(), env, backend)
        (out_dir / name).write_text(text, encoding="utf-8")
    return out_dir


def cap_summary(cap: Captured) -> dict[str, Any]:
    """The plain facts ISSUE.md needs about the captured run."""
    return {"kernel": cap.spec.name, "kernels": sorted({python_function(x.kernel).__name__ for x in cap.launches}),
            "params": cap.params, "case": Case(cap.params).id, "tolerance": cap.tolerance, "error": cap.error,
            "grids": [list(x.grid) for x in cap.launches], "outputs": sorted(cap.outputs),
            "metrics": cap.metrics}


@functools.lru_cache(maxsize=4)
def session_env(backend: Any) -> dict[str, Any]:
    """env.json's facts for ISSUE.md, probed once per backend per process."""
    from parity import envinfo

    try:
        probed = backend.env()
    except Exception as exc:  # env probing must never stop a repro
        probed = {"env_error": str(exc)[:200]}
    return envinfo.collect(backend.name, probed)


def attach(record: dict[str, Any], spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any,
           results_dir: Path) -> None:
    """Shrink, capture and write the repro of a failed/errored case; record where it went (or why not)."""
    if record.get("status") not in REPRO_STATUSES:
        return
    t0 = time.perf_counter()
    try:
        shrunk = shrink_case(spec, case, backend, record, seed=seed, cache=cache)
        cap = capture_case(spec, Case(shrunk.shrunk), backend, seed=seed, cache=cache)
        out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
        write_repro(out_dir, cap, record, shrunk, session_env(backend), backend.name)
        record["repro"] = out_dir.relative_to(results_dir).as_posix()
        record["shrink"] = shrunk.as_dict()
    except (ReproError, SourceError, OSError, RuntimeError, ValueError, TypeError) as exc:
        record["repro_error"] = f"{type(exc).__name__}: {exc}"[:600]
    timing = record.setdefault("timing", {})
    timing["repro_s"] = time.perf_counter() - t0


def is_standalone(script: str) -> bool:
    """True when the script imports nothing outside torch, triton, numpy, math, os, sys and __future__."""
    allowed = {"torch", "triton", "numpy", "math", "os", "sys", "torch_npu", "traceback", "__future__"}
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            roots = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots = {(node.module or "").split(".")[0]}
        else:
            continue
        if not roots <= allowed:
            return False
    return True


__all__ = ["REPRO_STATUSES", "Captured", "LaunchRecorder", "ReproError", "attach", "capture_case",
           "failure_signature", "is_standalone", "render_script", "shrink_case", "write_repro"]


# ---------------------------------------------------------------- texts: the script and ISSUE.md

SCRIPT = string.Template('''\
#!/usr/bin/env python3
"""Standalone repro: ${title}.

Generated by parity. Needs only torch, triton and numpy (plus torch_npu on Ascend).
Run `python repro.py` beside inputs.npz: it exits 1 and prints the mismatch (or the
kernel's error) while the bug is present, and exits 0 once it is fixed. It runs on
cuda or npu when present, else on Triton's CPU interpreter; TRITON_INTERPRET=1
forces the interpreter.
"""

from __future__ import annotations

import os
import sys
import traceback

import numpy as np
import torch

try:  # Ascend: registers the npu device with torch
    import torch_npu
except ImportError:
    torch_npu = None


def pick_device():
    if os.environ.get("TRITON_INTERPRET") == "1":
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    if torch_npu is not None and torch.npu.is_available():
        return "npu"
    os.environ["TRITON_INTERPRET"] = "1"  # no device: run the kernel in Triton's interpreter
    return "cpu"


DEVICE = pick_device()

import triton  # noqa: E402  (imported once TRITON_INTERPRET is settled)
import triton.language as tl  # noqa: E402
${imports}

# ---- the kernel, with its @triton.jit helpers and constexpr globals

${source}

# ---- the case

PARAMS = ${params}
TOLERANCE = ${tolerance}
# kernel tensor arguments: key -> (dtype, shape, stride, contiguous); values in inputs.npz
TENSORS = ${tensors}
# the reference's inputs: tensors (inputs.npz, "input.<name>") and scalars
INPUT_DTYPES = ${input_dtypes}
SCALAR_INPUTS = ${scalar_inputs}
# the checked outputs: name -> (tensor argument key, shape)
OUTPUTS = ${outputs}
EXPECT_ERROR = ${expect_error}
HERE = os.path.dirname(os.path.abspath(__file__))


def from_npz(arr, dtype):
    t = torch.from_numpy(np.ascontiguousarray(arr))
    want = getattr(torch, dtype)
    return t if t.dtype == want else t.view(want)


def load_tensor(data, key):
    dtype, shape, stride, contiguous = TENSORS[key]
    flat = from_npz(data[key], dtype).to(DEVICE)
    return flat.reshape(shape) if contiguous else flat.as_strided(shape, stride, 0)


def launch(T):
    """The recorded launches, in order, with the grids and arguments the failing run used."""
${launches}


def saved_reference(data):
    return {k[len("ref."):]: torch.from_numpy(data[k]) for k in data.files if k.startswith("ref.")}


def check(name, out, ref, valid):
    """Compare with the fp64 reference: |out - ref| <= atol + rtol*|ref| (or err_ratio when set)."""
    out, ref = out.detach().cpu().double(), ref.detach().cpu().double()
    rtol, atol, max_ratio = TOLERANCE["rtol"], TOLERANCE["atol"], TOLERANCE["max_err_ratio"]
    if out.shape != ref.shape:
        print(f"MISMATCH {name}: shape {list(out.shape)}, reference {list(ref.shape)}")
        return False
    finite = torch.isfinite(out) & torch.isfinite(ref)
    nan_out, nan_ref = torch.isnan(out), torch.isnan(ref)
    nonfinite = (nan_out != nan_ref) | (~finite & ~nan_out & ~nan_ref & (out != ref))
    diff = torch.where(finite, (out - ref).abs(), torch.zeros_like(ref))
    bad = (finite & (diff > atol + rtol * ref.abs())) | nonfinite
    keep = finite
    if valid is not None:
        bad, nonfinite, keep = bad & valid, nonfinite & valid, keep & valid
    d, r = (out - ref)[keep], ref[keep]
    max_abs = float(d.abs().max()) if d.numel() else 0.0
    rms_ref = float(r.pow(2).mean().sqrt()) if r.numel() else 0.0
    rms_d = float(d.pow(2).mean().sqrt()) if d.numel() else 0.0
    err_ratio = rms_d / rms_ref if rms_ref > 0 else (0.0 if rms_d == 0 else float("inf"))
    n_bad, n_nonfinite = int(bad.sum()), int(nonfinite.sum())
    if max_ratio is not None:
        passed = n_nonfinite == 0 and (err_ratio <= max_ratio or max_abs <= atol)
    else:
        passed = n_bad == 0
    stats = (f"max_abs_err={max_abs:.3g} err_ratio={err_ratio:.3g} "
             f"(rtol={rtol:g}, atol={atol:g}, max_err_ratio={max_ratio})")
    if passed:
        print(f"ok {name}: {stats}")
        return True
    total = int(valid.sum()) if valid is not None else out.numel()
    print(f"MISMATCH {name}: {n_bad} of {total} elements outside atol + rtol*|ref|, "
          f"{n_nonfinite} NaN/inf disagreements; {stats}")
    idx = bad.nonzero()
    if len(idx) and out.dim():
        lo, hi = idx.min(0).values.tolist(), idx.max(0).values.tolist()
        span = ", ".join(f"dim{i} {a}..{b}" for i, (a, b) in enumerate(zip(lo, hi)))
        print(f"  mismatches lie in {span} of shape {list(out.shape)}")
        inf = torch.full_like(diff, float("inf"))
        score = torch.where(bad, torch.where(nonfinite, inf, diff), torch.full_like(diff, -1.0))
        for flat in score.reshape(-1).topk(min(5, len(idx))).indices.tolist():
            at = tuple(int(i) for i in np.unravel_index(flat, tuple(out.shape)))
            print(f"  at {list(at)}: expected {float(ref[at]):.6g}, got {float(out[at]):.6g}")
    return False


def main():
    data = np.load(os.path.join(HERE, "inputs.npz"), allow_pickle=False)
    T = {key: load_tensor(data, key) for key in TENSORS}
    versions = f"{DEVICE}, triton {triton.__version__}, torch {torch.__version__}"
    try:
        launch(T)
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        elif DEVICE == "npu":
            torch.npu.synchronize()
    except Exception:
        traceback.print_exc()
        print(f"FAIL: the kernel launch raised ({versions})")
        return 1
    if EXPECT_ERROR and not OUTPUTS:
        print(f"ok: the launch completed without the error ({versions})")
        return 0
    fp64_inputs = dict(SCALAR_INPUTS)
    for name, dtype in INPUT_DTYPES.items():
        t = from_npz(data["input." + name], dtype)
        fp64_inputs[name] = t.double() if t.is_floating_point() else t
    ref = ${reference_call}
    ok = True
    for name, (key, shape) in OUTPUTS.items():
        valid = from_npz(data["valid." + name], "bool") if "valid." + name in data.files else None
        ok = check(name, T[key].reshape(shape), ref[name], valid) and ok
    print(("ok: matches the fp64 reference" if ok else "FAIL: differs from the fp64 reference") + f" ({versions})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
''')

TRACKERS = ("triton-ascend", "triton")
NEW_ISSUE_URLS = {"triton-ascend": "https://github.com/triton-lang/triton-ascend/issues/new/choose",
                  "triton": "https://github.com/triton-lang/triton/issues/new/choose"}
ENV_FIELDS = {
    "triton-ascend": (("Triton-Ascend", "triton_ascend"), ("CANN", "cann"), ("torch_npu", "torch_npu"),
                      ("ascendnpu-ir", "ascendnpu_ir"), ("torch", "torch"), ("Python", "python"),
                      ("Device", "device_name"), ("Arch", "target_arch"), ("OS", "platform")),
    "triton": (("Triton", "triton"), ("torch", "torch"), ("Python", "python"), ("GPU", "device_name"),
               ("Arch", "target_arch"), ("Driver", "driver"), ("CUDA", "cuda"), ("OS", "platform")),
}
METRIC_ROWS = ("max_abs_err", "max_rel_err", "err_ratio", "mismatch_frac", "nan_count", "worst_index", "region")


def issue_title(tracker: str, summary: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    kernels = ", ".join(summary["kernels"])
    if record.get("status") == "error":
        first = (summary.get("error") or record.get("reason") or "an error").splitlines()[0][:90]
        what = f"`{kernels}` fails to compile or launch: {first}"
    else:
        m = summary.get("metrics") or record.get("metrics") or {}
        what = f"`{kernels}` gives wrong results ({m.get('region') or 'see the mismatch'})"
    return f"[Bug]: {what}" if tracker == "triton-ascend" else what


def _metric_table(original: Mapping[str, Any] | None, shrunk: Mapping[str, Any] | None) -> str:
    from parity.report import fmt_num, md_escape, table

    rows = [[name, md_escape(fmt_num((original or {}).get(name))), md_escape(fmt_num((shrunk or {}).get(name)))]
            for name in METRIC_ROWS]
    return table(rows, ["metric", "original case", "shrunk case"])


def render_issue(tracker: str, summary: Mapping[str, Any], record: Mapping[str, Any], shrunk: Mapping[str, Any],
                 env: Mapping[str, Any], backend: str) -> str:
    """ISSUE.md, shaped for one tracker's bug template (title, bug, repro steps, environment)."""
    tol = summary["tolerance"]
    limit = f"rtol={tol['rtol']:g}, atol={tol['atol']:g}" + (
        f", err_ratio <= {tol['max_err_ratio']:g}" if tol.get("max_err_ratio") is not None else "")
    error = record.get("status") == "error"
    expected = ("the kernel compiles and launches." if error
                else f"every output matches a float64 reference computed on the CPU within {limit}.")
    actual = summary.get("error") or record.get("reason") or ""
    env_text = "\n".join(f"{label}: {env.get(key) or 'n/a'}" for label, key in ENV_FIELDS[tracker])
    steps = ", ".join(shrunk.get("steps") or []) or "none: no smaller case failed the same way"
    parts = [
        f"# {issue_title(tracker, summary, record)}", "",
        f"File at: {NEW_ISSUE_URLS[tracker]}", "",
        "### Describe the bug", "",
        f"Kernel `{', '.join(summary['kernels'])}` (parity kernel `{summary['kernel']}`), backend `{backend}`.", "",
        f"**Expected:** {expected}", "",
        "**Actual:**", "", "```text", actual.strip(), "```", "",
    ]
    if not error:
        parts += ["Error statistics (the shrunk case is the one `repro.py` runs):", "",
                  _metric_table(record.get("metrics"), summary.get("metrics")), ""]
    parts += [
        f"Original case: `{Case(shrunk['original']).id}`  ",
        f"Shrunk case: `{summary['case']}` (steps: {steps})", "",
        "### To reproduce", "",
        "This folder is self-contained: `repro.py` (the kernel, its launch, the fp64 reference and the check) "
        "and `inputs.npz` (numpy arrays, no pickle). It needs torch, triton and numpy"
        + (" (and torch_npu)." if tracker == "triton-ascend" else "."), "",
        "```bash",
        "python repro.py                      # exits 1 and prints the mismatch while the bug is present",
        "TRITON_INTERPRET=1 python repro.py   # the same kernel on Triton's CPU interpreter, for comparison",
        "```", "",
        f"Launch grid(s): {', '.join(str(tuple(g)) for g in summary['grids'])}.", "",
        "### Environment details", "", "```text", env_text, "```", "",
    ]
    return "\n".join(parts)
