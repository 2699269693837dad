"""The argument layout of a ttadapter kernel, and calling its x86 build once per grid program.

triton-adapter gives every kernel the same signature:

    (sync-block lock, workspace,      memref<?xi8> each, when the module names SyncBlockLockArgIdx /
                                      WorkspaceArgIdx (bishengir's; the ttadapter code never reads them)
     user arguments...,               the non-constexpr ones, minus those specialised to constants
                                      (None, ints equal to 1); a tensor is memref<?xT>, a scalar iN / fN
     gridX, gridY, gridZ, pidX, pidY, pidZ)   six i32

After convert-func-to-llvm a rank-r memref is passed as 3 + 2r words: allocated pointer,
aligned pointer, offset, r sizes, r strides. The host loops over every program id, as
the NPU's cores would (in some order): x fastest, then y, then z.
"""

from __future__ import annotations

import ctypes
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parity.backends.ascend.cpu_build_errors import LoweringUnsupported

GRID_ARGS = 6
SCALARS: dict[str, Any] = {"i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16,
                           "i32": ctypes.c_int32, "i64": ctypes.c_int64, "index": ctypes.c_int64,
                           "f32": ctypes.c_float, "f64": ctypes.c_double}
# element bytes of a memref's element type
ELEMENT_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}
# bishengir's own buffers: zero-filled stand-ins, never read by the ttadapter code
SCRATCH_BYTES = 1 << 16
_MEMREF_RE = re.compile(r"memref<((?:\?x|\d+x)*)(\w+)")
_FUNC_RE = re.compile(r"func\.func\s+@([\w$.]+)\(")


@dataclass(frozen=True)
class Arg:
    kind: str  # "memref" or "scalar"
    type: str  # element type of a memref, or the scalar's type
    rank: int = 0


@dataclass(frozen=True)
class Signature:
    name: str
    args: tuple[Arg, ...]
    front: int  # lock and workspace memrefs before the user arguments

    @property
    def user(self) -> tuple[Arg, ...]:
        return self.args[self.front:len(self.args) - GRID_ARGS]


def _split_top_level(text: str) -> list[str]:
    """`a: memref<?xf32> {x = 1, y = 2}, b: i32` split at commas outside <>, {}, () and []."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<{([":
            depth += 1
        elif ch in ">})]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:])
    return [p.strip() for p in parts]


def _func_args(ir_text: str) -> tuple[str, str, str]:
    """The entry's name, its argument list and its attribute dict, as text."""
    found = _FUNC_RE.search(ir_text)
    if not found:
        raise LoweringUnsupported("the ttadapter module has no func.func")
    depth, i = 1, found.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(ir_text[i], 0)
        i += 1
    attrs = re.match(r"\s*attributes\s*(\{[^\n]*\})", ir_text[i:])
    return found.group(1), ir_text[found.end():i - 1], attrs.group(1) if attrs else ""


def parse_signature(ir_text: str) -> Signature:
    name, args_text, attrs = _func_args(ir_text)
    args = []
    for part in _split_top_level(args_text):
        type_text = part.split(":", 1)[1].strip()
        memref = _MEMREF_RE.match(type_text)
        if memref:
            args.append(Arg("memref", memref.group(2), memref.group(1).count("x")))
        else:
            args.append(Arg("scalar", type_text.split()[0]))
    front = sum(key in attrs for key in ("SyncBlockLockArgIdx", "WorkspaceArgIdx"))
    tail = args[len(args) - GRID_ARGS:]
    if len(args) < front + GRID_ARGS or any(a != Arg("scalar", "i32") for a in tail):
        raise LoweringUnsupported(f"unexpected kernel signature (no six trailing i32 grid arguments): {args}")
    return Signature(name, tuple(args), front)


def user_values(signature_names: Sequence[str], constants: Mapping[str, Any], values: Sequence[Any]) -> list[Any]:
    """The launcher's non-constexpr values minus the ones the compile turned into constants."""
    return [v for n, v in zip(signature_names, values, strict=True) if n not in constants]


def _memref_words(address: int, numel: int, rank: int) -> tuple[list[Any], list[Any]]:
    """Descriptor words of a contiguous buffer seen as a rank-`rank` memref (rank 1 in practice)."""
    sizes = [numel] + [1] * (rank - 1)
    values = [ctypes.c_void_p(address), ctypes.c_void_p(address), ctypes.c_int64(0),
              *(ctypes.c_int64(s) for s in sizes), *(ctypes.c_int64(1) for _ in sizes)]
    return values, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, *([ctypes.c_int64] * 2 * rank)]


def pointer_extent(value: Any) -> tuple[int, int] | None:
    """(address, bytes from it to the end of its storage) of what Triton takes as a pointer, else None.

    A torch tensor, or a duck-typed pointer Triton also accepts (`data_ptr()` and `dtype`), such as
    FlagGems' StridedBuffer over a tensor (`_base`); the extent of a bare typed pointer is unknown (0).
    """
    import torch

    from parity.backends.ascend.lowered_device import host_tensor

    value = host_tensor(value)  # a tensor that says npu is CPU memory underneath
    if not (hasattr(value, "data_ptr") and hasattr(value, "dtype")):
        return None
    address = int(value.data_ptr())
    base = value if isinstance(value, torch.Tensor) else host_tensor(getattr(value, "_base", None))
    if not isinstance(base, torch.Tensor):
        return address, 0
    storage = base.untyped_storage()
    return address, max(storage.data_ptr() + storage.nbytes() - address, 0)


def _tensor_words(value: Any, arg: Arg, index: int) -> tuple[list[Any], list[Any]]:
    import torch

    from parity.backends.ascend.lowered_device import host_tensor

    value = host_tensor(value)
    base = getattr(value, "base", None)
    if type(value).__name__ == "TensorWrapper" and base is not None:
        # triton.reinterpret's wrapper (test_core's unsigned tensors): the same bytes, read as a dtype of the same
        # width; its `dtype` is Triton's, with no itemsize, so the memref is the base tensor's
        value = host_tensor(base)
    extent = pointer_extent(value)
    if extent is None:
        raise LoweringUnsupported(f"argument {index}: the kernel takes a memref<?x{arg.type}>, the launch passed "
                                  f"{type(value).__name__}")
    device = getattr(value, "device", torch.device("cpu"))
    if isinstance(value, torch.Tensor) and device.type != "cpu":
        raise LoweringUnsupported(f"argument {index}: ascend-lowered runs on CPU tensors, got {device}")
    element = value.dtype.itemsize
    if ELEMENT_BYTES.get(arg.type, element) != element:
        raise LoweringUnsupported(f"argument {index}: memref<?x{arg.type}> for a {value.dtype} tensor")
    address, available = extent
    return _memref_words(address, max(available // element, 1), arg.rank)


def _scalar_words(value: Any, arg: Arg, index: int) -> tuple[list[Any], list[Any]]:
    ctype = SCALARS.get(arg.type)
    if ctype is None:
        raise LoweringUnsupported(f"argument {index}: a scalar of type {arg.type} cannot be passed from the host "
                                  "(no C ABI for it here)")
    if hasattr(value, "item"):
        value = value.item()
    return [ctype(value)], [ctype]


def marshal(signature: Signature, values: Sequence[Any]) -> tuple[list[Any], list[Any], list[Any]]:
    """(argument values, ctypes argtypes, buffers to keep alive) for every argument before the grid ones."""
    import torch

    user = signature.user
    if len(user) != len(values):
        raise LoweringUnsupported(f"the ttadapter entry takes {len(user)} user arguments, the launch passed "
                                  f"{len(values)}")
    args: list[Any] = []
    types: list[Any] = []
    keep: list[Any] = []
    for arg in signature.args[:signature.front]:
        scratch = torch.zeros(SCRATCH_BYTES, dtype=torch.int8)
        keep.append(scratch)
        words, kinds = _memref_words(scratch.data_ptr(), SCRATCH_BYTES, arg.rank)
        args += words
        types += kinds
    for index, (arg, value) in enumerate(zip(user, values, strict=True)):
        words, kinds = (_tensor_words if arg.kind == "memref" else _scalar_words)(value, arg, index)
        args += words
        types += kinds
    return args, types, keep


def run_grid(function: Any, signature: Signature, grid: Sequence[int], values: Sequence[Any]) -> None:
    """Call the built entry once per program id of `grid` (gx, gy, gz)."""
    args, types, keep = marshal(signature, values)
    function.argtypes = [*types, *([ctypes.c_int32] * GRID_ARGS)]
    function.restype = None
    gx, gy, gz = (int(g) for g in grid)
    for z, y, x in itertools.product(range(gz), range(gy), range(gx)):
        function(*args, gx, gy, gz, x, y, z)
    del keep
