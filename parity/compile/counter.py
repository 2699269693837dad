"""Counting compilations, across the Triton versions that moved the hooks.

The counter is a layer on Triton's compile hooks (parity.seams.jit.before_compile / after_compile,
which know where each release keeps them). They fire on an in-memory cache miss, even when the
on-disk cache hits, so they count specializations rather than cold compiles.

The hooks are global: they see every kernel a launch compiles, also one a library generates at
run time (a module it writes with a fresh @triton.jit kernel and loads), which no spec can name.
Each compile is attributed to the Python function Triton compiled, by module.qualname and by the
file that defines it.
"""

from __future__ import annotations

import contextlib
import time
import types
import weakref
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def constants_by_name(arg_names: Sequence[str], constants: Mapping[Any, Any]) -> dict[str, Any]:
    """Constexpr values keyed by argument name; triton 3.3+ keys them by path tuples like (3,)."""
    named: dict[str, Any] = {}
    for key, value in constants.items():
        if isinstance(key, tuple):
            if len(key) != 1:
                continue  # an element of a tuple argument: not a heuristic flag
            key = arg_names[key[0]]
        elif isinstance(key, int):
            key = arg_names[key]
        named[str(key)] = value
    return named


def wrapper_chain(kernel: Any) -> list[Any]:
    """The kernel and every wrapper under it, down to the JITFunction (the one whose `.fn` is the plain
    Python function). Wrappers keep the next one on `.fn`: Heuristics, Autotuner, and a library's own layers
    (a cache or a tuner, which may carry a `cache_key` of its own), so only the plain function at the bottom
    marks the end."""
    chain = [kernel]
    while len(chain) < 8:
        inner = getattr(chain[-1], "fn", None)
        if inner is None or isinstance(inner, (types.FunctionType, types.MethodType)):
            break
        chain.append(inner)
    return chain


def innermost(obj: Any, limit: int = 8) -> Any:
    """Where the `.fn` chain of wrappers ends (Autotuner -> Heuristics -> JITFunction -> the plain function,
    through a library's layers too): the first plain function, else the last object with no `.fn`."""
    for _ in range(limit):
        if isinstance(obj, types.FunctionType) or getattr(obj, "fn", None) is None:
            break
        obj = obj.fn
    return obj


def innermost_name(obj: Any) -> str:
    """The name of what the wrappers end in (an autotuner's kernel, as its stored picks and pins name it)."""
    inner = innermost(obj)
    return getattr(inner, "__name__", type(inner).__name__)


def base_jit_function(kernel: Any) -> Any:
    """The JITFunction under Heuristics/Autotuner/library wrappers (they keep it on `.fn`)."""
    return wrapper_chain(kernel)[-1]


def library_kernel_caches(kernels: Iterable[Any]) -> list[dict[Any, Any]]:
    """Kernel caches a library keeps above triton's own, in the wrappers of these kernels.

    A library's adapter names the wrapper attributes that hold them (parity.spec.library, `kernel_cache_attrs`):
    a dict, or one dict per device, of kernels the wrapper compiled through the JITFunction and launches
    itself from then on. Clearing triton's caches alone leaves these, so a later case reuses the kernel
    without a compile and its count reads 0 where a plain kernel reads 1.
    """
    return [cache for kernel in kernels for wrapper in wrapper_chain(kernel) for cache in caches_on(wrapper)]


def cache_attrs() -> list[str]:
    """The wrapper attributes that hold a library's own kernel cache, as the registered adapters name them."""
    from parity.spec.library import adapters

    return list(dict.fromkeys(a for adapter in adapters() for a in adapter.kernel_cache_attrs))


def caches_on(wrapper: Any) -> list[dict[Any, Any]]:
    """The kernel caches one library wrapper keeps (a dict, or one dict per device)."""
    found: list[dict[Any, Any]] = []
    for attr in cache_attrs():
        cache = getattr(wrapper, attr, None)
        if isinstance(cache, dict):
            found.append(cache)
        elif isinstance(cache, (tuple, list)):
            found.extend(c for c in cache if isinstance(c, dict))
    return found


def drop_unlaunchable(caches: Iterable[dict[Any, Any]]) -> int:
    """Remove the entries that hold no kernel (None, or a tuple whose kernel is None): what a wrapper stored
    from a launch parity answered without running anything. A later launch of that key then goes through
    triton again instead of subscripting None. Returns how many were removed."""
    dropped = 0
    for cache in caches:
        for key in [k for k, v in cache.items() if v is None or (isinstance(v, (tuple, list)) and v and v[0] is None)]:
            del cache[key]
            dropped += 1
    return dropped


def forget_library_kernels(kernels: Iterable[Any]) -> None:
    """Empty the library-level caches, so the next launch compiles through triton, where the counter sees it."""
    for cache in library_kernel_caches(kernels):
        cache.clear()


def kernel_name(kernel: Any) -> str:
    base = base_jit_function(kernel)
    fn = getattr(base, "fn", base)
    return getattr(fn, "__name__", repr(kernel))


def _source_file(fn: Any) -> str:
    return str(getattr(getattr(fn, "__code__", None), "co_filename", "") or "")


def _python_id(fn: Any, fallback: str) -> str:
    """module.qualname; code exec'd without a __name__ has no module, so its file stands in."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None) or _source_file(fn) or "?"
    return f"{module}.{name}" if name else fallback


def kernel_id(kernel: Any) -> str:
    """module.qualname of the Python function under the wrappers: libraries reuse names (fla's generic
    and Ascend kkt kernels are both chunk_scaled_dot_kkt_fwd_kernel), so __name__ alone is ambiguous."""
    base = base_jit_function(kernel)
    return _python_id(getattr(base, "fn", base), repr(kernel))


def kernel_file(kernel: Any) -> str:
    """The file that defines the kernel's Python function ('' for an object Triton does not compile)."""
    return _source_file(getattr(base_jit_function(kernel), "fn", None))


def kernel_source(kernel: Any) -> tuple[str, str]:
    """(id, file): what compiles are attributed to; the file keeps apart generated kernels whose
    module names collide (code exec'd into namespaces with the same __name__)."""
    return kernel_id(kernel), kernel_file(kernel)


def compiles_itself(kernel: Any) -> bool:
    """Whether Triton compiles this kernel (a plain function under its wrappers), rather than a library
    object that generates the kernels it launches (FlagGems' PointwiseDynamicFunction)."""
    return isinstance(getattr(base_jit_function(kernel), "fn", None), types.FunctionType)


def source_labels(entries: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """(id, file) -> the name a table shows, for (short name, id, file) entries: the short name; the id
    where two share the name; the id and the file's name where two share the id too."""
    entries = list(dict.fromkeys(entries))
    names = Counter(n for n, _, _ in entries)
    ids = Counter(i for _, i, _ in entries)
    labels = {}
    for name, ident, file in entries:
        label = name if names[name] == 1 else ident if ids[ident] == 1 else f"{ident} ({file.rsplit('/', 1)[-1]})"
        labels[(ident, file)] = label
    return labels


def kernel_labels(kernels: Iterable[Any]) -> dict[str, str]:
    """kernel id -> the name a table shows: the short __name__, or the id where two kernels share it."""
    labels = source_labels((kernel_name(k), *kernel_source(k)) for k in kernels)
    return {ident: label for (ident, _), label in labels.items()}


def _event_ids(info: Any) -> tuple[str, str, str]:
    """(short name, id, file) of the kernel a compile hook names; triton 3.2's info.name is __name__,
    3.4+'s the qualname, so the id comes from the JITFunction when the hook passes it."""
    name = str(getattr(info, "name", "?"))
    jit = getattr(info, "jit_function", None)
    fn = getattr(jit, "fn", None)
    short = getattr(fn, "__name__", None) or name.rsplit(".", 1)[-1]
    fallback = f"{getattr(info, 'module', '?')}.{name}"
    return short, (_python_id(fn, fallback) if fn is not None else fallback), _source_file(fn)


# every JITFunction a CompileCounter saw compile in this process, held weakly: a kernel a library
# generates at run time is reachable from no spec, yet a sweep must clear its in-memory cache
COMPILED_HERE: weakref.WeakSet[Any] = weakref.WeakSet()


LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas")


def named_constants(constants: dict[Any, Any], jit: Any) -> dict[str, Any]:
    """Declared constexprs by parameter name, plain values only.

    An int specialized because it equals 1 also lands in `constants`; it is not a variant.
    """

    declared = {p.name for p in getattr(jit, "params", []) if getattr(p, "is_constexpr", False)}
    named = constants_by_name(list(getattr(jit, "arg_names", []) or []), constants)
    return {k: v for k, v in named.items()
            if (not declared or k in declared) and (v is None or isinstance(v, (int, float, bool, str)))}


@dataclass
class CompileEvent:
    kernel: str  # __name__, for display
    started: float
    seconds: float | None = None
    constants: dict[str, Any] = field(default_factory=dict)
    # launch options that select a distinct binary without being constexprs (autotune configs vary them)
    options: dict[str, Any] = field(default_factory=dict)
    kernel_id: str = ""  # module.qualname: what counts and tables key on (see kernel_id())
    file: str = ""  # the file that defines the kernel (generated code included)
    jit: Any = field(default=None, repr=False, compare=False)  # the JITFunction, to clear its caches

    @property
    def source(self) -> tuple[str, str]:
        return self.kernel_id, self.file

    @property
    def identity(self) -> str:
        """What makes this compilation a distinct binary, apart from runtime-arg specialization."""
        return repr((sorted(self.constants.items()), sorted(self.options.items())))


@dataclass
class CompileCounter:
    """Context manager: records every compilation that happens inside it.

    `count(kernels)` gives the compilations of the given kernels only.
    """

    events: list[CompileEvent] = field(default_factory=list)
    _remove: list[Any] = field(default_factory=list)

    def _before(self, inner: Any, **kwargs: Any) -> bool:
        info = kwargs.get("fn")
        name, ident, file = _event_ids(info)
        jit = getattr(info, "jit_function", None)
        if jit is not None:
            with contextlib.suppress(TypeError):  # an object that takes no weak reference is not cleared later
                COMPILED_HERE.add(jit)
        compile_kw = kwargs.get("compile") or {}
        event = CompileEvent(name, time.perf_counter(),
                             constants=named_constants(compile_kw.get("constants") or {},
                                                       getattr(info, "jit_function", None)),
                             options={k: compile_kw[k] for k in LAUNCH_OPTIONS if k in compile_kw},
                             kernel_id=ident, file=file, jit=jit)
        self.events.append(event)
        return bool(inner(**kwargs))

    def _after(self, inner: Any, **kwargs: Any) -> Any:
        _, ident, file = _event_ids(kwargs.get("fn"))
        for event in reversed(self.events):
            if event.source == (ident, file) and event.seconds is None:
                event.seconds = time.perf_counter() - event.started
                break
        return inner(**kwargs)

    def __enter__(self) -> CompileCounter:
        from parity.seams.jit import after_compile, before_compile

        self._remove = [before_compile().add(self._before), after_compile().add(self._after)]
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._remove, "CompileCounter.__exit__ without __enter__"
        for remove in reversed(self._remove):
            remove()
        self._remove = []

    def count(self, kernels: Iterable[Any] | None = None) -> int:
        if kernels is None:
            return len(self.events)
        ids = {kernel_id(k) for k in kernels}
        return sum(1 for e in self.events if e.kernel_id in ids)

    def per_kernel(self) -> dict[str, int]:
        """Compilations per kernel id (module.qualname)."""
        return dict(Counter(e.kernel_id for e in self.events))

    def compiled_kernels(self) -> list[dict[str, Any]]:
        """Every kernel compiled inside, in order of its first compile: {kernel (its label), id, file,
        compiles}. A record keeps this beside its total, so a count names what compiled, also kernels
        the spec could not list (generated by the library during the launch)."""
        counts = Counter(e.source for e in self.events)
        labels = source_labels((e.kernel, e.kernel_id, e.file) for e in self.events)
        return [{"kernel": labels[src], "id": src[0], "file": src[1], "compiles": n} for src, n in counts.items()]

    def compile_seconds(self) -> float:
        return sum(e.seconds or 0.0 for e in self.events)
