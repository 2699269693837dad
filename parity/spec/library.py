"""Libraries known by what they declare: one adapter per library, beside its specs.

A library's spec module (libraries/<name>.py) sets `LIBRARY = LibraryAdapter(...)` next to its SPECS; the
registry registers it with the module, and `known_adapters()` loads the adapters of every library parity
ships specs for, so a user's own module that imports one of those libraries gets its adapter too. The
engine asks the adapters, and names no library itself:

- identity and tracker: who a draft goes to (parity.triage.library_rule);
- `prepare(tier)`: what the library needs in the process before it is imported on a tier (vendor
  variables, cache locations, an import it relies on), run once per process, also on a plain
  `import <package>` from any module once `adapt_imports()` is in force;
- `kernel_cache_attrs`: attributes on the library's kernel wrappers that keep compiled kernels above
  Triton's own caches, which the compile counter must empty between cases.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# when a failure is the library's (parity.triage.library_rule decides it; reports and drafts quote it)
RULE = ("the library owns wrong results, configs it chose that the target cannot hold (UB overflow, out of "
        "resources), its own import failures, and uses of an API the backend lacks; the compiler keeps crashes, "
        "hangs and frontend or lowering errors on valid code")

# the module that lists the adapters of the libraries parity ships specs for (light: no library import)
KNOWN_ADAPTERS_MODULE = "libraries.adapters"


@dataclass(frozen=True)
class Tier:
    """What an adapter may ask about the tier it prepares for."""

    name: str | None  # the backend's name; None outside a parity run
    target: str | None  # its device family ("cuda", "ascend"); None under the interpreter
    mode: str | None  # run | compile | interpret
    presents: str | None = None  # the torch device module libraries find ("cuda", "npu"); see Backend.presents


@dataclass(frozen=True)
class LibraryAdapter:
    name: str  # as the project names itself
    dist: str  # the distribution on the package index, for its version
    repo: str  # where its issues go
    packages: tuple[str, ...]  # top-level import names its kernels live under
    families: tuple[str, ...]  # KernelSpec.family values that mean this library
    prepare: Callable[[Tier], None] | None = field(default=None, compare=False)
    kernel_cache_attrs: tuple[str, ...] = ()
    # triton-ascend modules the library's Ascend path selects and silently falls back from where one is absent:
    # on a triton-ascend without one, its kernels compile against the fallback (parity.triage.decide, rule 2)
    ascend_needs: tuple[str, ...] = ()


_ADAPTERS: dict[str, LibraryAdapter] = {}
_PREPARED: set[str] = set()


def register(adapter: LibraryAdapter) -> LibraryAdapter:
    """Add (or replace, by name) a library's adapter; returns it."""
    if not isinstance(adapter, LibraryAdapter):
        raise TypeError(f"LIBRARY must be a parity.spec.library.LibraryAdapter, got {type(adapter).__name__}")
    _ADAPTERS[adapter.name] = adapter
    return adapter


def adapters() -> list[LibraryAdapter]:
    """Every registered adapter, the known libraries' first."""
    known_adapters()
    return list(_ADAPTERS.values())


def known_adapters() -> list[LibraryAdapter]:
    """Register the adapters of the libraries parity ships specs for (none where that module is absent)."""
    try:
        module = importlib.import_module(KNOWN_ADAPTERS_MODULE)
    except ImportError:
        return []
    found = list(getattr(module, "ADAPTERS", ()))
    for adapter in found:
        if adapter.name not in _ADAPTERS:
            register(adapter)
    return found


def for_family(family: str | None) -> LibraryAdapter | None:
    return next((a for a in adapters() if family in a.families), None)


def for_package(top: str) -> LibraryAdapter | None:
    return next((a for a in adapters() if top in a.packages), None)


def tier_of(backend_cls: Any) -> Tier:
    """The tier a backend class declares (parity.backends.base.Backend's facets)."""
    return Tier(backend_cls.name or None, backend_cls.target, backend_cls.mode, backend_cls.presents)


_DEFAULT_TIER: list[Tier] = [Tier(None, None, None)]


def current_tier() -> Tier:
    """The tier of the backend this process runs for, else the one a backend's prepare() named."""
    from parity.spec.context import backend_facets, current_backend

    name = current_backend()
    return _DEFAULT_TIER[0] if name is None else tier_of(backend_facets(name))


def prepare(adapter: LibraryAdapter, tier: Tier | None = None, *, once: bool = True) -> None:
    """Run the adapter's preparation before its library is imported: once per process, or again (`once=False`,
    a spec module's import: the tier in scope may differ)."""
    if adapter.prepare is None or (once and adapter.name in _PREPARED):
        return
    _PREPARED.add(adapter.name)
    adapter.prepare(tier or current_tier())


class _PrepareOnImport(importlib.abc.MetaPathFinder):
    """Prepares a known library the first time any module imports it; imports nothing itself."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> None:
        if "." not in fullname:
            adapter = next((a for a in _ADAPTERS.values() if fullname in a.packages), None)
            if adapter is not None:
                prepare(adapter)
        return None


def adapt_imports(tier: Tier | None = None, extra: Iterable[LibraryAdapter] = ()) -> None:
    """From now on, importing a registered library's package first runs its adapter's preparation (a library
    already imported keeps the environment it was imported in)."""
    if tier is not None:
        _DEFAULT_TIER[0] = tier
    known_adapters()
    for adapter in extra:
        register(adapter)
    if not any(isinstance(f, _PrepareOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PrepareOnImport())
