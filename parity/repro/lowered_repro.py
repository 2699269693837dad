"""The ascend-lowered repro: the captured ttadapter modules, their inputs and a script that rebuilds and runs them.

Written beside the usual repro.py (which replays the Triton launch, and only fails on an NPU or
wherever the bug lives). This one needs no triton: numpy, a C compiler and LLVM/MLIR 19
rebuild each module exactly as the tier did, run it per grid program on the saved buffers,
and compare with the saved fp64 reference; it exits 1 while the lowering is wrong.
"""

from __future__ import annotations

import ctypes
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from parity.backends.ascend.cpu_build import prepare_module
from parity.repro import template
from parity.repro.source import literal
from parity.spec import Case, KernelSpec

FOLDER = "lowered"
STAND_IN_NOTE = ("the bodies of triton_cumsum_* (below) and triton_print_* (the .c beside this file) are parity's "
                 "CPU stand-ins for bishengir's library functions, as the ascend-lowered tier built them")
CTYPE_NAMES = {"i1": "c_bool", "i8": "c_int8", "i16": "c_int16", "i32": "c_int32", "i64": "c_int64",
               "index": "c_int64", "f32": "c_float", "f64": "c_double"}


def storage_bytes(t: Any) -> np.ndarray:
    """Everything a kernel pointer at t.data_ptr() can reach in t's storage, as bytes (a tensor, or a
    duck-typed pointer over one such as FlagGems' StridedBuffer)."""
    from parity.backends.ascend.cpu_abi import pointer_extent

    address, available = pointer_extent(t) or (0, 0)
    return np.frombuffer(ctypes.string_at(address, available), np.uint8).copy() if available else \
        np.zeros(0, np.uint8)


class BufferLog:
    """Each distinct tensor the launches receive, keyed by its address, with its bytes before the first launch."""

    def __init__(self) -> None:
        self.keys: dict[int, str] = {}
        self.initial: dict[str, np.ndarray] = {}
        self.dtypes: dict[str, str] = {}  # the dtype each buffer was first passed as (its red zone's fill)
        self.launches: list[tuple[str, str, tuple[int, int, int], list[Any]]] = []
        self.modules: dict[str, str] = {}  # file name -> module text

    def record(self, kernel: Any, grid: tuple[int, int, int], values: list[Any]) -> None:
        text = kernel.ir_text
        name = f"kernel_{hashlib.sha256(text.encode()).hexdigest()[:12]}.mlir"
        self.modules[name] = text
        signature = kernel.signature
        arguments: list[Any] = [("scratch", a.rank) for a in signature.args[:signature.front]]
        for arg, value in zip(signature.user, values, strict=True):
            if arg.kind == "memref":
                arguments.append(("tensor", self._key(value), arg.rank))
            else:
                arguments.append(("scalar", CTYPE_NAMES[arg.type], value.item() if hasattr(value, "item") else value))
        self.launches.append((name, signature.name, (int(grid[0]), int(grid[1]), int(grid[2])), arguments))

    def _key(self, t: torch.Tensor) -> str:
        from parity.run.redzone import unguarded

        t = unguarded(t)  # the caller's memory, not parity's red zones around it (the script adds its own)
        key = self.keys.get(t.data_ptr())
        if key is None:
            key = self.keys[t.data_ptr()] = f"b{len(self.keys)}"
            self.initial[key] = storage_bytes(t)
            self.dtypes[key] = str(getattr(t, "dtype", "uint8")).split(".")[-1]
        return key


class NoLoweredModule(RuntimeError):
    """The case fails after some lowered modules ran: there is no complete run to replay (repro_error says so)."""


def write(out_dir: Path, backend: Any, spec: KernelSpec, case: Case, *, seed: int, cache: Any) -> Path | None:
    """Run the case once more while logging its launches, then write lowered/ under out_dir.

    A case that fails before any lowered module runs (a frontend compile error, a launcher's own raise)
    has nothing to rebuild: no lowered/ is written, repro.py stands alone (None). One that fails after
    some launches raises NoLoweredModule, a RuntimeError the repro stage records as repro_error; the case
    keeps its record either way.
    """
    from parity.run import autotune_pin
    from parity.run.runner import build_inputs, reference_outputs

    cpu_inputs = build_inputs(spec, case, seed)
    ref = reference_outputs(spec, case, cpu_inputs, cache)
    log = BufferLog()
    backend.buffer_log = log
    try:
        with autotune_pin.pinned_case(spec, case.params), backend.presented() as present:
            value = spec.launch(present(cpu_inputs), case.params)
    except Exception as exc:  # the case's own failure, seen again: never lose its record over it
        if not log.launches:
            return None
        raise NoLoweredModule(f"the case raised after {len(log.launches)} lowered launch(es), so no complete "
                              f"run to replay: {type(exc).__name__}: {str(exc)[:300]}") from exc
    finally:
        backend.buffer_log = None
    outputs = {"out": value} if isinstance(value, torch.Tensor) else dict(value)
    folder = out_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {f"t.{k}": v for k, v in log.initial.items()}
    mapped = {}
    for name, tensor in outputs.items():
        key = log.keys.get(tensor.data_ptr())
        if name in ref and key is not None:
            mapped[name] = (key, str(tensor.dtype).split(".")[-1], list(tensor.shape), list(tensor.stride()))
            arrays[f"ref.{name}"] = ref[name].double().numpy()
            mask = spec.valid(name, case.params, ref[name].shape) if spec.valid else None
            if mask is not None:
                arrays[f"valid.{name}"] = mask.to(torch.bool).expand(ref[name].shape).contiguous().numpy()
    for name, text in log.modules.items():  # as the tier built it: with parity's stand-ins for library calls
        module = prepare_module(text)
        stand_ins = f"// parity: {STAND_IN_NOTE}\n" if module.mlir != text or module.c_source else ""
        (folder / name).write_text(stand_ins + module.mlir)
        if module.c_source:
            (folder / name.replace(".mlir", ".c")).write_text(module.c_source)
    np.savez_compressed(folder / "inputs.npz", **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as its allow_pickle
    (folder / "repro_lowered.py").write_text(render(spec, case, log, mapped, spec.tolerance_for(case.params)))
    return folder


def render(spec: KernelSpec, case: Case, log: BufferLog, outputs: Mapping[str, Any], tol: Any) -> str:
    from parity.backends.ascend.cpu_build import MEMREF_COPY_C, PASSES
    from parity.backends.ascend.cpu_softfloat import BF16_BUILTINS_LL

    tolerance = tol.as_dict()
    return template.render(
        "lowered_script", f"{spec.name} [{case.id}] on ascend-lowered",
        passes=literal(list(PASSES)), memref_copy_c=repr(MEMREF_COPY_C), bf16_builtins_ll=repr(BF16_BUILTINS_LL),
        launches=literal([list(launch) for launch in log.launches]), outputs=literal(dict(outputs)),
        buffer_dtypes=literal(dict(log.dtypes)),
        tolerance=literal({k: tolerance[k] for k in ("rtol", "atol", "max_err_ratio")}))
