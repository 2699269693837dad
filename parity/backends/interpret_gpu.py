"""What a library written for a GPU needs from the interpreter tier, so it runs there unchanged.

Two things, both installed by InterpretBackend.prepare() before any kernel module is imported:

- **torch.cuda names a device.** Libraries read it at import (FlagGems' kernel cache asks
  `torch.cuda.get_device_name()`, its launchers enter `torch.cuda.device(x.device)`). The interpreter
  stands for a CUDA GPU, so torch.cuda answers for an A100 (sm_80): the generic path, as Hopper paths
  lean on TMA and wgmma that the interpreter does not model. Tensors stay on the CPU. triton's driver
  still answers no target, so fla (which asks triton first) keeps its CPU path.
- **An interpreted kernel is also a JITFunction.** Under TRITON_INTERPRET=1 `triton.jit` returns an
  InterpretedFunction, which is no JITFunction and whose `run` launches at once and returns None.
  FlagGems' LibEntry walks `.fn` until it finds a JITFunction (so it reached the plain function:
  "'function' object has no attribute 'fn'"), reads its `params`/`signature`, and keeps what `run`
  returns to launch later with `kernel[grid](*args)`. The subclass below carries the JITFunction
  fields and returns a handle that launches through the interpreter again. A tensor look-alike argument
  (FlagGems' StridedBuffer) reaches the interpreter as a CPU view of the memory it points at.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

# sm_80, as cuda-compile's arch table has it: SMs, opt-in shared memory per block, registers per SM
A100 = (80, 108, 166912, 65536)


class InterpretedLaunch:
    """What an interpreted kernel's run() returns: `handle[grid](*args)` launches it again, as a CompiledKernel."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: self.kernel.run(*args, grid=grid, warmup=False, **kwargs)


class TensorLookalikeError(TypeError):
    """A kernel argument has data_ptr() but is no torch.Tensor, and no CPU view of its memory can stand in."""


def cpu_alias(value: Any) -> Any:
    """A CPU tensor over the memory a tensor look-alike points at, or None where that cannot be built.

    A compiled launch takes any object with data_ptr() as a pointer (FlagGems' pointwise ops pass their
    StridedBuffer); Triton's interpreter copies torch storage instead (new_empty/set_), so it needs a
    real tensor. On the CPU the pointer is a host address: a view of the same bytes (dtype, shape and
    non-negative strides from the look-alike) is what the compiled kernel would have read and written.
    """
    import ctypes

    import torch

    device = getattr(value, "device", None)
    stride = value.stride() if callable(getattr(value, "stride", None)) else None
    shape = tuple(getattr(value, "shape", ()) or ())
    if (device is not None and torch.device(device).type != "cpu") or stride is None \
            or len(stride) != len(shape) or any(s < 0 for s in stride) or not isinstance(value.dtype, torch.dtype):
        return None
    if any(n == 0 for n in shape):
        return torch.empty(shape, dtype=value.dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))  # elements from the first to the last
    nbytes = span * value.dtype.itemsize
    raw = torch.frombuffer((ctypes.c_byte * nbytes).from_address(value.data_ptr()), dtype=torch.uint8)
    return raw.view(value.dtype).as_strided(shape, tuple(stride))


def tensors_for_interpreter(kernel: str, arg_names: list[str], args: tuple[Any, ...],
                            kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with each tensor look-alike replaced by its CPU view; one that has none is named."""
    import torch

    def convert(name: str, value: Any) -> Any:
        if not hasattr(value, "data_ptr") or isinstance(value, torch.Tensor) or hasattr(value, "base"):
            return value  # a tensor, a scalar, or triton's own TensorWrapper (the interpreter unwraps it)
        alias = cpu_alias(value)
        if alias is None:
            raise TensorLookalikeError(
                f"{kernel}: argument {name!r} is a {type(value).__module__}.{type(value).__name__}, a tensor "
                "look-alike with data_ptr() but no CPU shape/stride view; a compiled launch accepts it, but "
                "Triton's interpreter copies only torch.Tensor storage, so this kernel cannot run under "
                "TRITON_INTERPRET=1. Check it on cuda-compile or a GPU instead")
        return alias

    names = [*arg_names, *(f"arg{i}" for i in range(len(arg_names), len(args)))]
    return (tuple(convert(n, v) for n, v in zip(names, args, strict=False)),
            {k: convert(k, v) for k, v in kwargs.items()})


def names_triton_language(fn: Any) -> bool:
    """Whether triton.language (or its core) is a global of `fn`, as the interpreter's patching requires."""
    import inspect

    import triton.language as tl

    return any(inspect.ismodule(v) and v in (tl, tl.core) for v in fn.__globals__.values())


def interpreted_jit_class() -> type | None:
    """InterpretedFunction with JITFunction's fields (params, signature, cache_key); None without the interpreter."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction
    except ImportError:
        return None

    # triton ships no type information: both bases are Any to mypy
    class InterpretedJIT(InterpretedFunction, JITFunction):  # type: ignore[misc]
        parity_interpreted_jit = True  # install_interpreted_jit installs it once

        def __init__(self, fn: Any, **kwargs: Any) -> None:
            try:
                JITFunction.__init__(self, fn, **kwargs)
            except TypeError:  # a triton whose JITFunction takes other options: the fields LibEntry reads
                JITFunction.__init__(self, fn)
            InterpretedFunction.__init__(self, fn, **kwargs)  # its fn/arg_names/pre_run_hooks win

        @property
        def cache_key(self) -> str:
            # JITFunction's hashes every global the kernel references, and refuses triton's own helpers
            # that were interpreted before this class was installed; with nothing compiled or cached under
            # the interpreter, the source identifies the kernel well enough (FlagGems names tables by it)
            return hashlib.sha256(f"{self.fn.__module__}.{self.fn.__qualname__}\n{self.src}".encode()).hexdigest()

        @property
        def __name__(self) -> str:  # JITFunction assigns it, InterpretedFunction derives it: derive, ignore
            name: str = self.fn.__name__
            return name

        @__name__.setter
        def __name__(self, value: str) -> None:
            pass

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if names_triton_language(self.fn):
                return InterpretedFunction.__call__(self, *args, **kwargs)
            # a device function whose module never imports triton.language (FlagGems' add_func is
            # `x + y * alpha`): the interpreter asserts it can see one to patch, yet there is nothing to patch
            # here (the calling kernel's patch is in force); compiled Triton accepts such a function
            from triton.runtime.errors import InterpreterError

            try:
                return self.rewrite()(*args, **kwargs)
            except Exception as exc:
                raise InterpreterError(repr(exc)) from exc

        def run(self, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            args, kwargs = tensors_for_interpreter(self.fn.__name__, self.arg_names, args, kwargs)
            InterpretedFunction.run(self, *args, grid=grid, warmup=warmup, **kwargs)
            return InterpretedLaunch(self)

    # repro source matches by name; setattr, as mypy takes the instances' `__name__` property for the class's own
    for attr in ("__name__", "__qualname__"):
        setattr(InterpretedJIT, attr, "InterpretedFunction")
    return InterpretedJIT


def install_interpreted_jit() -> Callable[[], None]:
    """Make `triton.jit` build InterpretedJIT under the interpreter; returns the undo."""
    cls = interpreted_jit_class()
    if cls is None:
        return lambda: None
    import triton.runtime.interpreter as interpreter

    saved = interpreter.InterpretedFunction
    if getattr(saved, "parity_interpreted_jit", False):
        return lambda: None
    from parity.seams.device import present_interpreted_function

    return present_interpreted_function(cls)  # jit() imports the name from this module at each decoration


def install_torch_cuda() -> Callable[[], None]:
    """torch.cuda answers for one A100 unless a real CUDA device is there; returns the undo."""
    import torch

    if torch.cuda.is_available():
        return lambda: None
    from parity.backends.cuda import torch_device

    return torch_device.install(*A100)
