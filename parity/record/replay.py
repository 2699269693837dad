"""Replay: each kept launch of a bundle as a case of a KernelSpec, so it runs through the same pipeline.

One spec per recorded kernel (its family: the kernel's module), one case per kept launch. The inputs
are the recorded buffers' bytes before the launch; the launch rebuilds every view and pointer table
over them and calls the kernel with the recorded grid, arguments and options (the config its tuner
chose included), so no tuner runs again. The "reference" is what the recording left: the bytes of each
storage the launch changed, compared at the loosest float it reads or writes (REPLAY_TOLERANCES, stated in
every record). On the compile tiers the same launch compiles each recorded specialization.

The kernel comes from its module where that imports here and its source hash matches the recording;
otherwise from the source captured with the bundle, and the record's params say which (`kernel_from`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from parity.backends import tiers_where
from parity.record import order_free
from parity.record.bundle import Bundle, BundleError, load_bundle
from parity.seams.torch_calls import unhandled
from parity.spec import DEFAULT_TOLERANCES, Case, KernelSpec, Tolerance

# Two devices' 16-bit arithmetic differs by ulps of the terms, not of the result: a product rounded to fp16 before a
# sum or a difference on one device is fused on the other, a sum runs in another order. torch's atol (1e-5) is for
# one device against itself; a replay compares two, so 16-bit floats get 4 ulps of a unit-size term (LightLLM's
# rotary kernel on the H200 against the interpreter: 2 ulps of its terms, docs/record-replay-2026-12-04.md).
TWO_DEVICES_16BIT = ("two devices' 16-bit arithmetic (products rounded before a sum or a difference on one, fused "
                     "on the other; sums in another order) differs by ulps of the terms, not of the result: "
                     "4 ulps of a unit-size term")
# fp32 likewise: each device's exp, sigmoid and rsqrt are approximations of their own (CUDA's fast intrinsics against
# the CPU's libm), a few ulps of each term apart; torch's rtol (1.3e-6, about 11 ulps of the result) flagged 2 of
# 87,552 elements of Liger-Kernel's swiglu backward recorded on the H200 and replayed on ascend-lowered, 3.3e-6 apart
TWO_DEVICES_FP32 = ("two devices' fp32 transcendental functions (exp, sigmoid, rsqrt: each device's own "
                    "approximation) differ by ulps of each term, not of the result")
REPLAY_TOLERANCES: dict[str, Tolerance] = {
    **DEFAULT_TOLERANCES,
    "fp32": Tolerance(rtol=1e-5, atol=1e-5, reason=TWO_DEVICES_FP32),
    "fp16": Tolerance(rtol=1e-3, atol=4 * 2.0**-10, reason=TWO_DEVICES_16BIT),
    "bf16": Tolerance(rtol=1.6e-2, atol=4 * 2.0**-7, reason=TWO_DEVICES_16BIT),
    "fp8": Tolerance(rtol=0.125, atol=1e-3, reason="fp8 keeps 2-3 mantissa bits: one rounding is up to 1/8 relative"),
    "int": Tolerance(rtol=0.0, atol=0.0, reason="integer and boolean outputs are exact"),
    "bytes": Tolerance(rtol=0.0, atol=0.0, reason="a storage reached only through a pointer table is compared "
                                                   "byte for byte"),
}
TOLERANCE_KEYS = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64"}
# loosest first: a launch with outputs of several dtypes is judged at the loosest one's tolerance
LOOSENESS = ("fp8", "bf16", "fp16", "fp32", "fp64", "int", "bytes")
ORIGINS: dict[str, str] = {}  # spec name -> "module" or "captured source (why)": where its kernel came from
FLOAT_LITERAL = re.compile(r"^float\('(-?inf|nan)'\)$")


class NotReplayable(RuntimeError):
    """This launch cannot run on this tier or from this bundle; a skip with the reason, never a failure."""

    parity_skip = True


def torch_dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise NotReplayable(f"dtype {name!r} does not exist in this torch ({torch.__version__})")
    return dtype


def tolerance_key(dtype: str) -> str:
    if dtype in TOLERANCE_KEYS:
        return TOLERANCE_KEYS[dtype]
    if dtype.startswith("float8"):
        return "fp8"
    return "bytes" if dtype == "uint8" else "int"


def decode(value: Mapping[str, Any], views: Mapping[str, torch.Tensor]) -> Any:
    """One recorded argument: a tensor view, a triton dtype or a plain literal (never evaluated code)."""
    if "tensor" in value:
        if "reinterpret" in value:  # recorded through a TensorWrapper (triton.reinterpret): wrapped again
            import triton
            import triton.language as tl

            return triton.reinterpret(views[value["tensor"]], tl.dtype(value["reinterpret"]))
        return views[value["tensor"]]
    if "tl_dtype" in value:
        import triton.language as tl

        return tl.dtype(value["tl_dtype"])
    text = value["literal"]
    m = FLOAT_LITERAL.match(text)
    return float(m.group(1)) if m else ast.literal_eval(text)


# ---------------------------------------------------------------- the kernel


def _captured_module(bundle: Bundle, info: Mapping[str, Any]) -> Any:
    """The captured source as a module file in parity's cache (Triton reads a kernel's source from its file)."""
    from parity.paths import cache_root

    text = (bundle.root / info["source"]).read_text(encoding="utf-8")
    name = "parity_replay_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    path = cache_root() / "replay-sources" / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def resolve_kernel(bundle: Bundle, info: Mapping[str, Any]) -> tuple[Any, str]:
    """(the JITFunction to launch, where it came from); raises NotReplayable with both reasons."""
    from parity.compile.counter import base_jit_function
    from parity.repro.source import python_function

    module, qualname = info.get("module", "?"), info.get("qualname", "?")
    if module == "__main__" or "<locals>" in qualname or qualname == "?":
        why = f"{module}.{qualname} is defined in a script or inside a function, so it cannot be imported"
    else:
        try:
            obj: Any = importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            src = inspect.getsource(python_function(obj))
            if hashlib.sha256(src.encode()).hexdigest()[:16] == info.get("source_hash"):
                return base_jit_function(obj), "module"
            why = f"{module}.{qualname} here has other source than the recorded kernel"
        except Exception as exc:  # any import failure: the captured source is the fallback
            why = f"{module}.{qualname} does not import here ({type(exc).__name__}: {str(exc)[:200]})"
    if info.get("source"):
        try:
            found = getattr(_captured_module(bundle, info), info["entry"])
        except Exception as exc:
            raise NotReplayable(f"{why}; its captured source does not load either: {type(exc).__name__}: "
                                f"{str(exc)[:300]}") from None
        return found, f"captured source ({why})"
    raise NotReplayable(f"{why}; and the recording kept no source: {info.get('source_error', 'unknown reason')}")


# ---------------------------------------------------------------- one launch


def output_names(entry: Mapping[str, Any], params: list[str]) -> dict[str, str]:
    """Buffer key -> a readable output name: the kernel parameter whose view reaches it first."""
    names: dict[str, str] = {}
    args = [*entry["args"], *entry["kwargs"].values()]
    arg_names = [*(params[i] if i < len(params) else f"arg{i}" for i in range(len(entry["args"]))),
                 *entry["kwargs"]]
    for name, value in zip(arg_names, args, strict=True):
        if "tensor" in value:
            names.setdefault(entry["views"][value["tensor"]]["buffer"], name)
    return {b: names.get(b, b) for b in entry["outputs"]}


def output_dtype(entry: Mapping[str, Any], buffer: str) -> str:
    return next((v["dtype"] for v in entry["views"].values() if v["buffer"] == buffer), "uint8")


def typed(flat: torch.Tensor, dtype: str) -> torch.Tensor:
    """A uint8 buffer as a 1-D tensor of `dtype` (a trailing partial element is left out)."""
    dt = torch_dtype(dtype)
    size = dt.itemsize  # no tensor made for it: on a compile tier each torch call goes through the target's device
    return flat[: flat.numel() // size * size].view(dt)


def build_views(entry: Mapping[str, Any], buffers: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The launch's tensors as views of this run's buffers, each of its buffer's type.

    Built past torch's handlers (seams.torch_calls.unhandled): on a compile tier the buffers say they live on the
    target, and every call on them costs a subclass dispatch and the tier's device handler (a view 19 us against
    1.5 us on a plain tensor); a view of a buffer is then given its buffer's type, as that dispatch would have.
    """
    views = {}
    with unhandled():
        for key, v in entry["views"].items():
            buffer = buffers[v["buffer"]]
            flat = typed(buffer, v["dtype"])
            view = flat.as_strided(v["shape"], v["stride"], flat.storage_offset() + v["offset"])
            views[key] = view if type(view) is type(buffer) else view.as_subclass(type(buffer))
        for key, table in entry["pointers"].items():  # addresses of this run's buffers, as the recording's were
            values = [buffers[e[0]].data_ptr() + e[1] if isinstance(e, list) else e for e in table]
            views[key].view(-1).copy_(torch.tensor(values, dtype=views[key].dtype))
    return views


def launch_entry(kernel: Any, entry: Mapping[str, Any], inputs: Mapping[str, Any],
                 names: Mapping[str, str]) -> dict[str, torch.Tensor]:
    views = build_views(entry, inputs)
    args = [decode(a, views) for a in entry["args"]]
    kwargs = {k: decode(v, views) for k, v in entry["kwargs"].items()}
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k not in entry.get("options", {})}
    kernel[tuple(entry["grid"])](*args, **kwargs)
    with unhandled():  # plain tensors over the buffers' memory: what a tier hands back after a launch
        return {names[b]: typed(inputs[b], output_dtype(entry, b)) for b in entry["outputs"]}


FLOAT_KEYS = ("fp8", "bf16", "fp16", "fp32", "fp64")


def judged_at(entry: Mapping[str, Any]) -> str:
    """The tolerance key a launch is judged at: the loosest of its outputs' dtypes and, where it writes floats, of
    every float tensor it reads too. A kernel that reads fp16 and writes fp32 (attention logits from fp16 q and k)
    computes at fp16's precision, so two devices' answers differ at fp16's, not fp32's; integer outputs stay exact."""
    keys = [tolerance_key(output_dtype(entry, b)) for b in entry["outputs"]] or ["bytes"]
    if any(k in FLOAT_KEYS for k in keys):
        keys += [k for k in (tolerance_key(v["dtype"]) for v in entry["views"].values()) if k in FLOAT_KEYS]
    return min(keys, key=LOOSENESS.index)


# what a tier raises when a launch needs another device's API: (pattern over the error chain's text, what it needs)
INTERPRETER_ONLY_LACKS = re.compile(r"(extern_elementwise|inline_asm) not supported in interpreter mode")
UNKNOWN_OPTION = re.compile(r"Keyword argument (\w+) was specified but unrecognised")


def _chain_text(exc: BaseException) -> str:
    seen: BaseException | None = exc
    parts = []
    for _ in range(8):
        if seen is None:
            break
        parts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return "\n".join(parts)


def device_only(exc: BaseException, entry: Mapping[str, Any]) -> str | None:
    """Why a launch that raised needs a device-only API this tier lacks ("not replayable here"), else None.

    Two cases, both about where the replay runs, never about the kernel: the interpreter cannot run inline
    asm or an extern (libdevice) call that the recording device ran; a launch option the recording's backend
    took (an NPU-only one such as multibuffer on upstream, a CUDA-only one on triton-ascend) is no option of
    this tier's backend. Any other error stays a failure.
    """
    text = _chain_text(exc)
    m = INTERPRETER_ONLY_LACKS.search(text)
    if m:
        return (f"not replayable here: the kernel calls {m.group(1)}, which the interpreter cannot run "
                "(a device API); replay it on a compile or device tier")
    m = UNKNOWN_OPTION.search(text)
    if m and m.group(1) in entry.get("options", {}):
        return (f"not replayable here: launch option {m.group(1)}={entry['options'][m.group(1)]!r} is no option of "
                "this tier's backend (the recording's backend took it); record on this backend to check it here")
    return None


def _run_tier() -> bool:
    from parity.spec.context import backend_facets, current_backend

    name = current_backend()
    return name is None or backend_facets(name).mode != "compile"


# ---------------------------------------------------------------- specs


def _spec_name(info: Mapping[str, Any], taken: set[str]) -> str:
    base = re.sub(r"\W", "_", str(info.get("name", "kernel"))) or "kernel"
    name = base if base not in taken else f"{base}_{info.get('id', 'x')[:6]}"
    taken.add(name)
    return name


def kernel_spec(bundle: Bundle, entries: list[dict[str, Any]], name: str) -> KernelSpec:
    info = entries[0]["kernel"]
    params = [p[0] for p in info.get("params") or []]
    try:
        kernel, origin = resolve_kernel(bundle, info)
        missing = None
    except NotReplayable as exc:
        kernel, origin, missing = f"<not replayable: {info.get('qualname')}>", "none", str(exc)
    recorded: dict[str, dict[str, torch.Tensor]] = {}  # the last launch's recorded outputs, by its id

    def after_of(entry: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        if entry["id"] not in recorded:
            recorded.clear()  # one launch's tensors at a time
            recorded[entry["id"]] = bundle.tensors(entry, "after.")
        return recorded[entry["id"]]

    def entry_of(p: Mapping[str, Any]) -> dict[str, Any]:
        entry: dict[str, Any] = entries[p["launch"]]
        return entry

    def make_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
        entry = entry_of(p)
        # one read of the launch's file, checked against its digests; fresh tensors each call. A BundleError
        # (a damaged file) is the case's `error`, owned by the bundle (parity.errors.input_error)
        found, after = bundle.before_after(entry)
        recorded.clear()
        recorded[entry["id"]] = after
        # the recorded outputs' digest, so a cached reference follows any change to them
        h = hashlib.sha256()
        for k in sorted(after):
            h.update(k.encode())
            # the bytes in place: the same digest as of a copy of them (numpy's stubs declare the buffer
            # protocol ndarray has on every Python only for 3.12+, as __buffer__)
            h.update(after[k].numpy())  # type: ignore[arg-type]
        return {**found, "recorded_outputs": h.hexdigest()}

    def reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        entry = entry_of(p)
        names = output_names(entry, params)
        after = after_of(entry)
        out = {}
        for b in entry["outputs"]:
            t = typed(after[b], output_dtype(entry, b))
            out[names[b]] = t.to(torch.float64) if t.is_floating_point() else t
        return out

    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        entry = entry_of(p)
        if entry.get("unresolved_pointers"):
            raise NotReplayable(f"not replayable here: pointer table(s) {sorted(entry['unresolved_pointers'])} "
                                "hold addresses in no tensor the recording saw")
        try:
            outputs = launch_entry(kernel, entry, inputs, output_names(entry, params))
        except Exception as exc:
            reason = device_only(exc, entry)
            if reason is None:
                raise
            raise NotReplayable(reason) from exc
        if not outputs and _run_tier():
            raise NotReplayable("not checked: the recorded launch changed no byte of any storage it reached "
                                "(it wrote what was already there, or nothing), so there is no output to compare")
        return outputs

    def case_of(i: int, entry: Mapping[str, Any]) -> Case:
        return Case({"launch": i, "grid": tuple(entry["grid"]), "out": judged_at(entry)})

    def not_here(error: str, p: Mapping[str, Any]) -> str | None:
        """A compile tier's rejected launch option that the recording's backend took: not replayable here."""
        return device_only(RuntimeError(error), entry_of(p))

    cases = [case_of(i, e) for i, e in enumerate(entries)]
    judged = order_free.applied(bundle.root, info, launch, reference, dict(REPLAY_TOLERANCES))
    ORIGINS[name] = origin if missing is None else f"not replayable: {missing}"
    module = info.get("module", "?")
    return KernelSpec(
        name=name, family=module if module != "__main__" else Path(info.get("file", "main")).stem,
        kernel=kernel, launch=judged[0], reference=judged[1], make_inputs=make_inputs,
        cases=lambda level: cases, compile_signature=lambda level: cases,
        tolerance=judged[2], tolerance_key=lambda p: p["out"],
        fork=False, unavailable=(lambda: missing) if missing else None, not_here=not_here,
        doc=f"replayed from {bundle.root}: {module}.{info.get('qualname')} ({info.get('file')}:{info.get('line')}); "
            f"kernel from {origin}")


def selected(bundle: str, requested: list[str]) -> tuple[list[KernelSpec], dict[str, Any]]:
    """--replay BUNDLE's specs, narrowed by --kernels names or families where given (the plugin's source of
    specs in place of parity.spec.registry.build), and the provenance every record carries. A bundle that
    cannot be read is a SpecError naming the file."""
    from parity.spec import SpecError
    from parity.spec.library import adapt_imports
    from parity.spec.registry import Registry

    adapt_imports()  # a recorded library's kernels import with its adapter, as its specs would
    registry = Registry()
    try:
        specs = specs_from_bundle(bundle)
    except BundleError as exc:
        raise SpecError(f"--replay {bundle}: {exc}") from None
    for spec in specs:
        registry.add(spec, f"--replay {bundle}")
    chosen = registry.select(requested) if requested else list(registry)
    # where each kernel came from, which ParitySession.write stamps on that kernel's records as kernel_from
    return chosen, {**provenance(bundle), "kernel_from": {s.name: ORIGINS.get(s.name) for s in chosen}}


def recorded_on(bundle: Bundle) -> str:
    """The tier the recording stands for: interpret under TRITON_INTERPRET=1, else the device it ran on."""
    envs = [p.get("env", {}) for p in bundle.processes]
    if envs and all(e.get("interpret") for e in envs):
        facets: dict[str, object] = {"mode": "interpret"}
    else:
        devices = {str(e.get("device", "")) for e in envs}
        if any("Ascend" in d for d in devices) or any(e.get("torch_npu") for e in envs):
            facets = {"mode": "run", "hardware": True, "target": "ascend"}
        elif any(d and d != "cpu" for d in devices):
            facets = {"mode": "run", "hardware": True, "target": "cuda"}
        else:
            return "unknown"
    return next(iter(tiers_where(**facets)), "unknown")  # the tier with those facets, as the backends declare


def provenance(path: str | Path) -> dict[str, Any]:
    """What every record of a --replay run carries: the bundle, the tier that recorded it (a replay on that
    tier reproduces its own recording, so triage takes it as no evidence: parity.triage.evidence), and whether
    its tensor files are checked against digests (an older bundle's are not: `Bundle.verified`)."""
    bundle = load_bundle(path)
    return {"bundle": str(path), "recorded_on": recorded_on(bundle), "verified": bundle.verified()}


def kernel_groups(bundle: Bundle) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Kernel id -> (its spec name, its kept launches in recording order)."""
    by_kernel: dict[str, list[dict[str, Any]]] = {}
    for entry in bundle.launches:
        by_kernel.setdefault(entry["kernel"].get("id", "?"), []).append(entry)
    taken: set[str] = set()
    return {k: (_spec_name(entries[0]["kernel"], taken), entries) for k, entries in by_kernel.items()}


def specs_from_bundle(path: str | Path) -> list[KernelSpec]:
    """One KernelSpec per recorded kernel of the bundle at `path`."""
    bundle = load_bundle(path)
    return [kernel_spec(bundle, entries, name) for name, entries in kernel_groups(bundle).values()]
