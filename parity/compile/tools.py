"""Pieces both compile-only backends share: walking kernel wrappers, naming a compile's
variant and autotune config, clearing JIT caches (parity.run.compile_judge judges a compile against a spec).

Nothing here imports triton at module level, so upstream triton and triton-ascend
(3.2, class-attribute hooks, `fn.cache`) can both use it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from parity.spec import Case, KernelSpec

MESSAGE_LIMIT = 600
# every key a compile dict carries (see the results contract, `compile`)
COMPILE_KEYS = ("kernel", "variant", "config", "ok", "stage_reached", "error_kind", "message", "ub_bits",
                "ub_limit_bits", "n_regs", "n_spills", "shared_bytes", "core_type", "grid", "launch_error",
                "seconds")
# error_kind values the compile backends write: ub_overflow, unsupported, mlir_error, out_of_resources, crash,
# timeout, launch_option. out_of_resources (shared memory or threads over the SM's limit) is the cuda analogue
# of ub_overflow: the binary builds, but the driver would refuse to load it. launch_option: the launch passed
# an option this Triton rejects before compiling (parity.compile.keep_going)
AUTOTUNE_OPTIONS = ("num_warps", "num_stages")


class _NoEvent:
    """A timing event that times nothing. elapsed_time is long on purpose: triton.testing.do_bench
    sizes its warm-up and repeat loops by it, so each config then runs (and compiles) once or twice."""

    def __init__(self, enable_timing: bool = False, **kwargs: Any) -> None:
        pass

    def record(self, stream: Any = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, other: Any) -> float:
        return 1000.0


class NoDeviceInterface:
    """driver.active.get_device_interface() for a compile tier: what do_bench touches, doing nothing."""

    Event = _NoEvent

    @staticmethod
    def synchronize(device: Any = None) -> None:
        pass

    @staticmethod
    def current_device() -> int:
        return 0

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def is_available() -> bool:
        return True


class CompileOnlyDriver:
    """What both compile-only drivers answer alike: one virtual device, no streams, never auto-selected.

    An Autotuner given `warmup=`/`rep=` (or a library's own tuner) calls triton.testing.do_bench
    instead of get_benchmarker(); the device interface and benchmark cache below let it run,
    compiling each config and timing nothing.
    """

    def get_device_interface(self) -> type[NoDeviceInterface]:
        return NoDeviceInterface

    def get_empty_cache_for_benchmark(self) -> Any:
        import torch

        return torch.empty(1, dtype=torch.int32)

    def clear_cache(self, cache: Any) -> None:
        cache.zero_()

    @classmethod
    def is_active(cls) -> bool:
        return False  # installed explicitly for the session, never by triton's driver discovery

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        pass

    def get_current_stream(self, device: int | None = None) -> int:
        return 0


def empty_compile(kernel: str) -> dict[str, Any]:
    """A compile dict with every key present, so readers never guess."""
    compiled: dict[str, Any] = dict.fromkeys(COMPILE_KEYS)
    compiled.update(kernel=kernel, variant={}, config={}, ok=False)
    return compiled


# an LLVM crash dump: its frames are addresses, useless in a report and long enough to push
# the actual error out of the trimmed message
_STACK_FRAME_RE = re.compile(
    r"^\s*(#\d+\s+0x[0-9a-fA-F]+|Stack dump:|PLEASE submit a bug report|\d+\.\s+Program arguments:)")


_REASON_RE = re.compile(r"^(\w+Error|\w+Exception)(\(|: )")


def trim_message(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """A compiler message cut to `limit`: its first line (what failed where) and its tail (why)."""
    text = "\n".join(line for line in text.strip().splitlines() if not _STACK_FRAME_RE.match(line)).strip()
    if len(text) <= limit:
        return text
    head = text.splitlines()[0][: limit // 4]
    from parity.reasons import key_line

    key = key_line(text)[: limit // 3]  # the compiler's own `error:` line, wherever the dumps put it
    if key and key not in head and key not in text[-(limit - len(head) - 3):]:
        head = f"{head} … {key}"
    tail = text[-(limit - len(head) - 3):]
    # an error in a jit helper nests: the helper's reason (a TypeError(...) line) sits in the middle,
    # between the kernel's first line and the outer call site's source; keep it, in place of some tail
    why = next((line.strip() for line in text.splitlines()[1:] if _REASON_RE.match(line.strip())), None)
    if why and why not in head and why not in tail:
        why = why[: limit // 3]
        return f"{head} … {why} … {text[-(limit - len(head) - len(why) - 6):]}"
    return f"{head} … {tail}"


def exception_text(exc: BaseException) -> str:
    """The exception with the causes it chains, the innermost first (parity.errors.chained_text)."""
    from parity.errors import chained_text

    return chained_text(exc)


def unwrap(kernel: Any) -> list[Any]:
    """A kernel and every wrapper under it: Autotuner -> Heuristics -> JITFunction (each keeps `.fn`),
    through library layers too (parity.compile.counter.wrapper_chain)."""
    from parity.compile.counter import wrapper_chain

    return wrapper_chain(kernel)


def jit_functions(kernels: Iterable[Any]) -> list[Any]:
    return [unwrap(k)[-1] for k in kernels]


def autotuners(kernels: Iterable[Any]) -> list[Any]:
    return [w for k in kernels for w in unwrap(k) if hasattr(w, "configs") and hasattr(w, "keys")]


def autotune_keys(kernels: Iterable[Any]) -> set[str]:
    """The meta-parameters any autotune config of these kernels sets, and the compile options its configs
    vary beyond warps and stages (triton-ascend's bishengir knobs: set_workspace_multibuffer, ...)."""
    keys = set()
    for tuner in autotuners(kernels):
        keys |= {key for config in tuner.configs for key in config.kwargs}
        keys |= varied_options(tuner.configs)
    return keys


def varied_options(configs: Sequence[Any]) -> set[str]:
    """Compile options (Config.all_kwargs() beyond kwargs) whose value differs between the configs."""
    options = [{k: repr(v) for k, v in (c.all_kwargs() if hasattr(c, "all_kwargs") else {}).items()
                if k not in c.kwargs and k not in AUTOTUNE_OPTIONS} for c in configs]
    return {k for k in {k for o in options for k in o} if len({o.get(k) for o in options}) > 1}


def clear_jit_caches(kernels: Iterable[Any]) -> None:
    """Forget in-memory compiles and autotune picks, so each case compiles (from the disk cache)
    exactly what it needs, whatever ran before it in this worker."""
    from parity.compile.counter import forget_library_kernels
    from parity.seams.versions import forget_compiled

    kernels = list(kernels)
    forget_library_kernels(kernels)  # a library's own kernel cache (its adapter names it) would hide the compile
    for kernel in kernels:
        for wrapper in unwrap(kernel):
            forget_compiled(wrapper)


def plain(value: Any) -> Any:
    """A JSON-friendly form of a constexpr value (tl.dtype, constexpr wrappers, ...)."""
    value = getattr(value, "value", value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def variant_and_config(named: Mapping[str, Any], options: Mapping[str, Any], variant_keys: Iterable[str],
                       config_keys: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split one compile's constexprs into its heuristic variant and its autotune config."""
    variant = {k: plain(named[k]) for k in variant_keys if k in named}
    if not config_keys:
        return variant, {}
    config = {k: plain(named[k]) for k in sorted(config_keys) if k in named}
    config.update({k: options[k] for k in AUTOTUNE_OPTIONS if k in options})
    return variant, config


def reached_variants(spec: KernelSpec, cases: Iterable[Case], make_inputs: Callable[[Case], Mapping[str, Any]],
                     device_type: str) -> set[tuple[tuple[str, Any], ...]]:
    """The heuristic variants the cases resolve to, found without compiling anything.

    The JIT's before-compile hook returns True, which tells triton to skip the compile
    and the launch, so this walks the real heuristics and launchers at no cost. The launches
    get tensors of `device_type` (the tier's target), as the compile suite's do.
    """
    from parity.compile.counter import constants_by_name
    from parity.compile.device_tensors import launch_on_target
    from parity.seams.jit import before_compile

    seen: set[tuple[tuple[str, Any], ...]] = set()
    keys = list(spec.variants)

    def skip(inner: Any, **kwargs: Any) -> bool:  # the compile never starts: the hooks under it never see it
        fn = kwargs["fn"].jit_function
        named = constants_by_name(fn.arg_names, kwargs["compile"]["constants"])
        seen.add(tuple((k, plain(named.get(k))) for k in keys))
        return True

    remove = before_compile().add(skip)
    try:
        for case in cases:
            clear_jit_caches(spec.kernels)
            launch_on_target(spec.launch, make_inputs(case), case.params, device_type)
    finally:
        remove()
        clear_jit_caches(spec.kernels)
    return seen


def declared_variants(spec: KernelSpec) -> set[tuple[tuple[str, Any], ...]]:
    """Every combination of the spec's declared heuristic flags."""
    combos: list[tuple[tuple[str, Any], ...]] = [()]
    for key, values in spec.variants.items():
        combos = [(*c, (key, plain(v))) for c in combos for v in values]
    return set(combos)
