"""Where specs come from: the shared kernels/ package, --kernels modules, and entry points.
A module may also set `LIBRARY`, its library's adapter (parity.spec.library), registered with its specs.

A module contributes specs through a module-level `SPECS` list. The shared kernels
use exactly this path; they have no private way in.
"""

from __future__ import annotations

import difflib
import importlib
import os
import pkgutil
import traceback
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import TypeVar, overload

from parity.spec import KernelSpec, SpecError

ENTRY_POINT_GROUP = "parity.kernels"
SHARED_PACKAGE = "kernels"

_Loaded = TypeVar("_Loaded")


class Registry:
    def __init__(self) -> None:
        self._specs: dict[str, KernelSpec] = {}
        self._origin: dict[str, str] = {}

    def add(self, spec: KernelSpec, origin: str) -> None:
        if not isinstance(spec, KernelSpec):
            raise SpecError(f"{origin}: SPECS holds {type(spec).__name__}, expected parity.KernelSpec")
        if self._specs.get(spec.name) is spec:
            return  # the same spec again (a library module that re-exports another's SPECS): one kernel, not two
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
        library = getattr(module, "LIBRARY", None)  # the library adapter beside its specs (parity.spec.library)
        if library is not None:
            from parity.spec.library import register

            register(library)
        return list(specs)

    def __iter__(self) -> Iterator[KernelSpec]:
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
                guess = _guess(name, [*self._specs, *self.families()])
                raise SpecError(f"unknown kernel or family {name!r}; {guess}kernels: "
                                f"{', '.join(sorted(self._specs))}; families: {', '.join(self.families())}; "
                                "a module (examples.user_kernels.l2norm) or a .py file path is taken too")
            chosen.update((s.name, s) for s in hits)
        return list(chosen.values())


# folders no user module lives in: scanning them for "did you mean" costs time and suggests nothing useful
SKIP_DIRS = frozenset({".git", ".nox", ".venv", "venv", "node_modules", "reports", "__pycache__", "build", "dist"})


def nearby_modules(root: Path, depth: int = 3) -> list[str]:
    """Dotted names of the .py files under `root` (a few levels deep): what a misspelt module may have meant."""
    found: list[str] = []

    def walk(folder: Path, prefix: tuple[str, ...]) -> None:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.is_dir() and len(prefix) + 1 < depth and entry.name not in SKIP_DIRS \
                    and not entry.name.startswith("."):
                walk(entry, (*prefix, entry.name))
            elif entry.suffix == ".py" and entry.stem != "__init__" and entry.stem.isidentifier():
                found.append(".".join((*prefix, entry.stem)))

    walk(root, ())
    return found


# how close a name must be to be suggested (difflib's ratio): 'vector_ad' -> 'vector_add' is 0.95, while a module
# name that merely starts with a kernel's ('softmax_np22' -> 'softmax', 0.74) is no guess worth printing
GUESS_CUTOFF = 0.8


def _guess(name: str, kernels: list[str]) -> str:
    """ "did you mean ...? " for an unknown name: the closest of the kernels, families and the modules near the
    working directory, whichever are closer (a misspelt module gets its module, never a shared kernel)."""
    modules = nearby_modules(Path.cwd())
    by_last = {m.rpartition(".")[2]: m for m in reversed(modules)}  # `softmax_np2` means examples/softmax_np2.py too

    def best(pool: list[str]) -> tuple[float, list[str]]:
        close = difflib.get_close_matches(name, pool, n=3, cutoff=GUESS_CUTOFF)
        return (difflib.SequenceMatcher(None, name, close[0]).ratio() if close else 0.0), close

    kernel_score, kernel_close = best(kernels)
    module_score, module_close = best([*modules, *by_last])
    if module_score > kernel_score:
        shown = list(dict.fromkeys(by_last.get(c, c) for c in module_close))
        return f"did you mean the module {' or '.join(repr(c) for c in shown)}? "
    return f"did you mean {' or '.join(repr(c) for c in kernel_close)}? " if kernel_close else ""


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
    modules: list[ModuleType] = []
    for info in sorted(infos, key=lambda i: i.name):
        module = load(info.name, f"kernel module {info.name}")
        if hasattr(module, "SPECS"):
            modules.append(module)
    return modules


def entry_point_modules() -> list[ModuleType]:
    modules = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = load(ep.value, f"entry point {ep.name!r} ({ep.value})", ep.load)
        if not isinstance(loaded, ModuleType):
            raise SpecError(f"entry point {ep.name!r} in group {ENTRY_POINT_GROUP} must name a module "
                            f"with SPECS, got {type(loaded).__name__}")
        modules.append(loaded)
    return modules


def _user_frame(exc: BaseException) -> str:
    """file:line of the innermost frame outside parity and the import machinery: the user's line."""
    engine = str(Path(__file__).resolve().parent)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(("<", engine)) and "importlib" not in f.filename]
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}"
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


def import_error_message(name: str, exc: BaseException) -> str:
    """Why importing module `name` failed, and the fix; pure, so each branch is tested alone."""
    if isinstance(exc, SpecError):
        return f"{exc} (at {_user_frame(exc)})"
    if isinstance(exc, SyntaxError):
        return f"syntax error at {_user_frame(exc)}: {exc.msg}; fix the module"
    if isinstance(exc, ModuleNotFoundError) and exc.name and not _is_part_of(exc.name, name):
        top = exc.name.split(".")[0]
        return (f"it needs the package {top!r}, which is not installed here ({exc}); install it into this "
                f"session's environment (`pip install {top}`, or add it to the nox session)")
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        close = _close_modules(exc.name)
        if close:
            return f"no module {exc.name!r}; did you mean {' or '.join(repr(c) for c in close)}?"
    if isinstance(exc, ImportError):
        return (f"cannot import it ({exc}); the module must be importable from the working directory or "
                "PYTHONPATH, as a dotted name (e.g. examples.user_kernels.l2norm)")
    return (f"importing it raised {type(exc).__name__}: {exc} (at {_user_frame(exc)}); fix the module "
            f"(`python -c 'import {name}'` shows the traceback)")


def _close_modules(missing: str) -> list[str]:
    """Modules beside a missing dotted name whose names are close to it (a misspelt last part)."""
    parent, _, last = missing.rpartition(".")
    try:
        path = importlib.import_module(parent).__path__ if parent else None
    except Exception:  # the parent is missing or broken too: nothing to suggest from
        return []
    names = [i.name for i in pkgutil.iter_modules(path)]
    return [f"{parent}.{n}" if parent else n for n in difflib.get_close_matches(last, names, n=3)]


def _is_part_of(missing: str, name: str) -> bool:
    """A missing `missing` means `name` itself is absent (not one of its dependencies)."""
    return name == missing or name.startswith(missing + ".")


@overload
def load(name: str, origin: str, loader: None = None) -> ModuleType: ...


@overload
def load(name: str, origin: str, loader: Callable[[], _Loaded]) -> _Loaded: ...


def load(name: str, origin: str, loader: Callable[[], object] | None = None) -> object:
    """Import a spec module; any failure is a SpecError naming `origin` and the fix, never a traceback."""
    try:
        return loader() if loader else importlib.import_module(name)
    except Exception as exc:  # a user module may raise anything at import; each becomes one clear line
        raise SpecError(f"{origin}: {import_error_message(name.split(':')[0], exc)}") from exc


def module_name(item: str) -> str:
    """A --kernels module as a dotted name; a file path under the working directory is converted."""
    if not (item.endswith(".py") or "/" in item or os.sep in item):
        return item
    path = Path(item).resolve()
    try:
        relative = path.with_suffix("").relative_to(Path.cwd())
    except ValueError:
        relative = None
    if not path.exists():
        near = difflib.get_close_matches(path.name, [p.name for p in path.parent.glob("*.py")], n=3)
        hint = f"did you mean {' or '.join(repr(str(path.parent / n)) for n in near)}? " if near else ""
        raise SpecError(f"--kernels {item}: no such file ({path}); {hint}pass a file that exists under the working "
                        "directory, or a dotted module name importable from PYTHONPATH")
    if not path.is_file() or relative is None:
        raise SpecError(f"--kernels {item}: not a module file under the working directory; pass a dotted "
                        f"module name importable from PYTHONPATH, e.g. --kernels {path.stem} with "
                        f"PYTHONPATH={path.parent}")
    return ".".join(relative.parts)


def import_user_module(path: str) -> ModuleType:
    name = module_name(path)
    return load(name, f"--kernels {path}")


def build(requested: Iterable[str] = (), include_shared: bool = True) -> tuple[Registry, list[KernelSpec]]:
    """The registry and the selected specs for --kernels `requested` (names, families, modules, or MODULE:NAME for
    one kernel or family of a module)."""
    from parity.spec.library import adapt_imports

    adapt_imports()  # a module that imports a known library gets its adapter, whoever wrote the module
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
        where, colon, picked = item.partition(":")
        if colon and where and picked:  # MODULE:NAME: one kernel (or family) of a module, not all of its specs
            specs = registry.add_module(import_user_module(where))
            hits = [s for s in specs if picked in (s.name, s.family)]
            if not hits:
                raise SpecError(f"{where} has no kernel or family {picked!r}; its kernels: "
                                f"{', '.join(sorted(s.name for s in specs)) or 'none'}")
            selected.update((s.name, s) for s in hits)
            continue
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
