"""Pieces both compile-only backends share: walking kernel wrappers, naming a compile's
variant and autotune config, clearing JIT caches, and judging a compile against a spec.

Nothing here imports triton at module level, so upstream triton and triton-ascend
(3.2, class-attribute hooks, `fn.cache`) can both use it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from parity.spec import Case, ExpectedCompileError, KernelSpec, format_value

MESSAGE_LIMIT = 600
# every key a compile dict carries (see the results contract, `compile`)
COMPILE_KEYS = ("kernel", "variant", "config", "ok", "stage_reached", "error_kind", "message", "ub_bits",
                "ub_limit_bits", "n_regs", "n_spills", "shared_bytes", "core_type", "grid", "launch_error",
                "seconds")
# error_kind values. out_of_resources (shared memory or threads over the SM's limit) is the
# cuda analogue of ub_overflow: the binary builds, but the driver would refuse to load it.
# launch_option: the launch passed an option this Triton rejects before compiling (parity.compile.keep_going)
ERROR_KINDS = ("ub_overflow", "unsupported", "mlir_error", "out_of_resources", "crash", "timeout", "launch_option")
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
    """The exception with the causes it chains, the innermost first: triton's CompilationError carries
    only the source and the caret, and the reason ("Shape element 0 must be a power of 2") is its
    __cause__. The outer exceptions follow it, for the source location."""
    import traceback

    chain, seen = [], exc
    for _ in range(6):
        chain.append("".join(traceback.format_exception_only(type(seen), seen)).strip())
        nxt = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
        if nxt is None or nxt is seen:
            break
        seen = nxt
    if len(chain) == 1:
        return chain[0]
    return "\n".join([chain[-1], *(f"raised from: {text}" for text in reversed(chain[:-1]))])


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


def compile_label(compile_: Mapping[str, Any], with_kernel: bool) -> str:
    """The part a record's case id gets when a case compiled more than once."""
    parts = [f"kernel={compile_['kernel']}"] if with_kernel else []
    parts += [f"{k}={format_value(v)}" for k, v in {**compile_["variant"], **compile_["config"]}.items()]
    if compile_.get("error_kind") == "launch_option":  # the rejected launch, beside the retry's compile
        parts.append("launch")
    return ",".join(parts) or "compile"


def expected_error(spec: KernelSpec, backend: str) -> ExpectedCompileError | None:
    """The spec's expected compile error on this backend; `cuda` also covers `cuda-compile` (its target)."""
    from parity.backends import backend_class

    names = {backend, backend_class(backend).target or backend}
    return next((e for e in spec.expected_compile_errors if e.backend in names), None)


def judge(compile_: Mapping[str, Any], expected: ExpectedCompileError | None) -> tuple[str, str | None]:
    """(status, reason) of one compile: a record's verdict, before known divergences."""
    message = compile_.get("message") or ""
    if expected is not None:
        if compile_["ok"]:
            return "failed", (f"expected a compile error matching {expected.pattern!r} ({expected.reason}), "
                              f"but it compiled to {compile_.get('stage_reached')}")
        if re.search(expected.pattern, message, re.IGNORECASE | re.DOTALL):
            return "passed", f"failed as expected ({expected.reason}): {message}"
        return "failed", (f"expected a compile error matching {expected.pattern!r}, got "
                          f"{compile_.get('error_kind')}: {message}")
    if compile_.get("error_kind") == "launch_option":
        return "failed", f"launch: {message}"
    if not compile_["ok"] and not compile_.get("error_kind"):  # the launcher raised, not a compiler
        return "failed", f"launch: {message}"
    if not compile_["ok"]:
        from parity.compile.ascend_only import language_finding

        stage = compile_.get("stage_reached")
        where = f"after {stage}" if stage else "in the code generator, before any IR"
        ascend = language_finding(message)  # an Ascend-first kernel on upstream: say which extension
        return "failed", f"{compile_.get('error_kind')} {where}: {ascend + ': ' if ascend else ''}{message}"
    if compile_.get("launch_error"):
        return "failed", f"launch: {compile_['launch_error']}"
    return "passed", None


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


def compile_records(backend: str, spec: KernelSpec, case: Case,
                    compiles: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One results record per compile of a case, judged against the spec's expectations.

    With more than one compile, each record's case id gets the kernel/variant/config after a `;`.
    A case that compiled nothing gets one `skipped` record, so every case is accounted for.
    """
    from parity.compile.ascend_only import language_finding
    from parity.results import empty_record
    from parity.run import mistakes

    expected = expected_error(spec, backend)
    if not compiles:
        record = empty_record(backend, "compile", spec.name, case.id, dict(case.params))
        record.update(suite="compile", compiles=0, status="failed" if expected else "skipped",
                      reason="the launcher compiled no kernel for this case")
        return [record]
    with_kernel = len({c["kernel"] for c in compiles}) > 1
    records = []
    for compile_ in compiles:
        case_id = case.id if len(compiles) == 1 else f"{case.id};{compile_label(compile_, with_kernel)}"
        record = empty_record(backend, "compile", spec.name, case_id, dict(case.params))
        record.update(suite="compile", compiles=1, compile={k: compile_.get(k) for k in COMPILE_KEYS},
                      expected_compile_error=expected.pattern if expected else None)
        record["timing"]["compile_s"] = compile_.get("seconds")
        if compile_.get("fit"):  # the configs that fit, for an overflow (parity.fit)
            record["fit"] = compile_["fit"]
        record["status"], record["reason"] = judge(compile_, expected)
        # an Ascend-only extension is named as such (ascend_only), never as a misspelt tl. function
        diagnosis = (mistakes.diagnose(compile_.get("message"), spec.kernels)
                     if record["status"] == "failed" and not language_finding(compile_.get("message") or "") else None)
        if diagnosis is not None:
            record["diagnosis"] = diagnosis
            record["reason"] = mistakes.explain(diagnosis, record["reason"])
        known = spec.divergence_for(backend, case.params)
        if known is not None and record["status"] in ("failed", "passed"):
            note = f"known divergence: {known.reason} ({known.link})"
            record["known_divergence"] = {"reason": known.reason, "link": known.link}  # a field on every tier
            failed = record["status"] == "failed"
            record["status"] = "xfailed" if failed else "xpassed"
            record["reason"] = f"{note}; observed: {record['reason']}" if failed else note
        records.append(record)
    _skip_configs_the_autotuner_skips(records, compiles)
    return records


def _skip_configs_the_autotuner_skips(records: list[dict[str, Any]], compiles: Sequence[Mapping[str, Any]]) -> None:
    """An autotune config over the SM's resources is one Triton's Autotuner drops (it times it as
    inf), so it is `skipped` with its message while another config of the same kernel and
    variant fits; with none that fits, it stays `failed`."""
    def group(c: Mapping[str, Any]) -> tuple[Any, ...]:
        return (c["kernel"], tuple(sorted((k, format_value(v)) for k, v in c["variant"].items())))

    fits = {group(c) for c, r in zip(compiles, records, strict=True) if r["status"] == "passed"}
    for compile_, record in zip(compiles, records, strict=True):
        if (record["status"] == "failed" and compile_.get("error_kind") == "out_of_resources"
                and compile_.get("config") and group(compile_) in fits):
            record["status"] = "skipped"
            record["reason"] = f"the Autotuner drops this config, another one fits: {record['reason']}"
