"""Importing a library for its specs: lazily, once, and never as a parity crash."""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from libraries.pins import PINS


def bare_module(name: str, path: Path | None) -> ModuleType:
    """Register `name` in sys.modules without running any file: a package over `path` (its submodules import from
    there, its __init__ never runs), or with no path an empty module a loader fills with stand-ins."""
    module = ModuleType(name)
    module.__package__ = name
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=path is not None)
    if path is not None:
        module.__path__ = [str(path)]
        module.__spec__.submodule_search_locations = [str(path)]
    sys.modules[name] = module
    return module


class LibraryImportError(RuntimeError):
    """The library is installed but failed to import here: its finding, raised from each launch."""


@dataclass
class Library:
    """One library: its import name, the pinned distribution to install, and the modules specs use."""

    package: str  # the import name, e.g. "fla"
    pip: str  # the command that installs it, e.g. "pip install --no-deps fla-core==0.6.0 && pip install einops"
    _modules: dict[str, ModuleType] = field(default_factory=dict)
    _missing: str | None = None
    _failed: str | None = None  # the package's own import raised: every module of it fails with this
    # a submodule's import raised: that module alone (another module of the library may import fine)
    _module_failed: dict[str, str] = field(default_factory=dict)

    def _import(self, name: str) -> ModuleType | None:
        if name in self._modules:
            return self._modules[name]
        if self._missing or self._failed or name in self._module_failed:
            return None
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.split(".")[0] == self.package:
                self._missing = f"{self.package} is not installed here; `{self.pip}`"
            else:  # the library is there, one of its own dependencies is not
                self._fail(name, f"import error: {self.package} needs {exc.name!r} ({exc})")
            return None
        except Exception as exc:  # the library's import raised: a finding about it on this tier
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            self._fail(name, f"import error: importing {name} raised {type(exc).__name__}: {exc} "
                             f"(at {frame.filename.split('site-packages/')[-1]}:{frame.lineno})")
            return None
        self._modules[name] = module
        return module

    def _fail(self, name: str, message: str) -> None:
        if name == self.package:
            self._failed = message
        else:
            self._module_failed[name] = message

    @classmethod
    def pinned(cls, name: str) -> Library:
        """The library of libraries.pins.PINS[name], at the version its specs were written against."""
        pin = PINS[name]
        return cls(pin.package, pin.pip_command())

    def unavailable(self) -> str | None:
        """KernelSpec.unavailable: only a missing library skips; an import failure is a finding."""
        self._import(self.package)
        return self._missing

    def module(self, name: str) -> ModuleType:
        """The library module `name`; raises LibraryImportError (the case's error) when it cannot import."""
        module = self._import(name)
        if module is None:
            raise LibraryImportError(self._failed or self._module_failed.get(name) or self._missing
                                     or f"cannot import {name}")
        return module

    def kernels(self, *paths: str) -> tuple[Any, ...] | str:
        """The Triton kernels a spec names ("module:attr"), for compile counting; a label when absent."""
        try:
            found = tuple(getattr(self.module(m), a) for m, a in (p.split(":") for p in paths))
        except (LibraryImportError, AttributeError):
            return f"{self.package}:{'+'.join(p.split(':')[1] for p in paths)}"
        return found

    def op(self, path: str) -> Callable[..., Any]:
        """A public op ("module:attr"), looked up when a case launches."""
        module_name, attr = path.split(":")
        return getattr(self.module(module_name), attr)


def perf_fields(cases: Callable[[str], Any]) -> dict[str, Any]:
    """KernelSpec fields that make the perf pass time one case of a library op, its largest full case.

    The perf pass runs a library's own autotuning, unpinned, for every case it times (about 8 s a case
    on the H200 for fla and FlagGems), so one representative case per op is all it gets. Where this
    parity has no `KernelSpec.perf_cases` yet, nothing: the pass then picks one case per dtype itself.
    """
    from dataclasses import fields

    from parity import KernelSpec

    if "perf_cases" not in {f.name for f in fields(KernelSpec)}:
        return {}
    return {"perf_cases": (list(cases("full"))[-1],)}
