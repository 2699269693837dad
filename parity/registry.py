"""Where specs come from: the shared kernels/ package, --kernels modules, and entry points.

A module contributes specs through a module-level `SPECS` list. The shared kernels
use exactly this path; they have no private way in.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from importlib import metadata
from types import ModuleType

from parity.spec import KernelSpec, SpecError

ENTRY_POINT_GROUP = "parity.kernels"
SHARED_PACKAGE = "kernels"


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, KernelSpec] = {}
        self._origin: dict[str, str] = {}

    def add(self, spec: KernelSpec, origin: str) -> None:
        if not isinstance(spec, KernelSpec):
            raise SpecError(f"{origin}: SPECS holds {type(spec).__name__}, expected parity.KernelSpec")
        if spec.name in self._specs:
            raise SpecError(f"duplicate kernel name {spec.name!r}: defined in {self._origin[spec.name]} "
                            f"and in {origin}; rename one")
        self._specs[spec.name] = spec
        self._origin[spec.name] = origin

    def add_module(self, module: ModuleType) -> list[KernelSpec]:
        specs = getattr(module, "SPECS", None)
        if specs is None:
            raise SpecError(f"module {module.__name__} has no SPECS list; define "
                            "`SPECS = [KernelSpec(...), ...]` at module level")
        for spec in specs:
            self.add(spec, module.__name__)
        return list(specs)

    def __iter__(self) -> Iterable[KernelSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def names(self) -> list[str]:
        return list(self._specs)

    def families(self) -> list[str]:
        return sorted({s.family for s in self._specs.values()})

    def get(self, name: str) -> KernelSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise SpecError(f"unknown kernel {name!r}; valid: {', '.join(sorted(self._specs))}") from None

    def select(self, names: Iterable[str]) -> list[KernelSpec]:
        """Specs named directly or through their family; unknown names list the valid ones."""
        chosen: dict[str, KernelSpec] = {}
        for name in names:
            hits = [s for s in self._specs.values() if name in (s.name, s.family)]
            if not hits:
                raise SpecError(f"unknown kernel or family {name!r}; kernels: {', '.join(sorted(self._specs))}; "
                                f"families: {', '.join(self.families())}")
            chosen.update((s.name, s) for s in hits)
        return list(chosen.values())


def shared_families() -> list[str]:
    """The family sub-packages of kernels/ (kernels/<family>/)."""
    package = importlib.import_module(SHARED_PACKAGE)
    return sorted(i.name for i in pkgutil.iter_modules(package.__path__) if i.ispkg)


def shared_modules(families: Iterable[str] | None = None) -> list[ModuleType]:
    """Every module under kernels/ (or only under the given family packages) that defines SPECS."""
    package = importlib.import_module(SHARED_PACKAGE)
    if families is not None:
        roots = [(importlib.import_module(f"{SHARED_PACKAGE}.{f}").__path__, f"{SHARED_PACKAGE}.{f}.")
                 for f in families]
    else:
        roots = [(package.__path__, f"{SHARED_PACKAGE}.")]
    infos = [info for path, prefix in roots for info in pkgutil.walk_packages(path, prefix)]
    modules = []
    for info in sorted(infos, key=lambda i: i.name):
        module = importlib.import_module(info.name)
        if hasattr(module, "SPECS"):
            modules.append(module)
    return modules


def entry_point_modules() -> list[ModuleType]:
    modules = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = ep.load()
        if not isinstance(loaded, ModuleType):
            raise SpecError(f"entry point {ep.name!r} in group {ENTRY_POINT_GROUP} must name a module "
                            f"with SPECS, got {type(loaded).__name__}")
        modules.append(loaded)
    return modules


def import_user_module(path: str) -> ModuleType:
    try:
        return importlib.import_module(path)
    except ImportError as exc:
        raise SpecError(f"--kernels {path}: cannot import it ({exc}); the module must be importable from "
                        "the working directory or PYTHONPATH") from exc


def build(requested: Iterable[str] = (), include_shared: bool = True) -> tuple[Registry, list[KernelSpec]]:
    """The registry and the selected specs for --kernels `requested` (names, families or modules)."""
    registry = Registry()
    requested = [r for r in requested if r]
    if include_shared:
        # a request made only of family names imports just those families: faster, and a
        # broken module elsewhere in kernels/ cannot stop the run
        families = shared_families()
        only = requested if requested and all(r in families for r in requested) else None
        for module in shared_modules(only):
            registry.add_module(module)
    for module in entry_point_modules():
        registry.add_module(module)
    if not requested:
        return registry, list(registry)
    selected: dict[str, KernelSpec] = {}
    names: list[str] = []
    for item in requested:
        if "." in item or item not in registry.names() + registry.families():
            if "." not in item and item.isidentifier() and not _importable(item):
                names.append(item)  # let select() report the unknown name with the valid list
                continue
            for spec in registry.add_module(import_user_module(item)):
                selected[spec.name] = spec
        else:
            names.append(item)
    for spec in registry.select(names):
        selected[spec.name] = spec
    return registry, list(selected.values())


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
