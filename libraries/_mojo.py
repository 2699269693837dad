"""Loading mojo_opset's Atlas A2 kernels and its torch goldens without its device dispatch.

`import mojo_opset` imports every backend and picks its kernels by the device it finds (NPU, MLU,
Iluvatar; else "meta_device", which has no kernels). To reach the A2 kernels on any tier, the parent
packages' `__init__`s are skipped (their directories are registered as bare packages) and the kernel
modules are imported directly, as mojo's NPU dispatch imports them. Shared by libraries/mojo_opset.py
and libraries/mojo_opset_attn.py.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

from libraries._load import Library
from libraries.pins import snapshot_version
from parity import KernelSpec
from parity.run.second_reference import SecondReference

REPO = "https://github.com/XPU-Forces/mojo_opset"
INSTALL = f"pip install --no-deps git+{REPO} einops pydantic   (or PYTHONPATH=<checkout>)"
# one Library per kernel module: a module that fails to import here (a finding of its own) must not
# hide the others, and Library remembers its first import failure
_LIBS: dict[str, Library] = {}
A2 = "mojo_opset.backends.ttx.kernels.npu.a2"
# parents whose __init__ would pick a device backend at import: registered as bare packages
BARE = ("", ".backends", ".backends.ttx", ".backends.ttx.kernels", ".backends.ttx.kernels.npu", ".utils", ".core",
        ".core.operators")


def _bare_packages() -> None:
    """Register mojo_opset's parent packages without running their __init__ (see the module doc)."""
    if "mojo_opset.backends.ttx.kernels.npu" in sys.modules:
        return
    found = importlib.util.find_spec("mojo_opset")
    if found is None or not found.submodule_search_locations:
        return
    root = Path(next(iter(found.submodule_search_locations)))
    for suffix in BARE:
        name = "mojo_opset" + suffix
        module = types.ModuleType(name)
        module.__path__ = [str(root.joinpath(*suffix.split(".")[1:]))]
        module.__package__ = name
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__spec__.submodule_search_locations = list(module.__path__)
        sys.modules[name] = module
    # the snapshot has no .git and no metadata: name the commit its specs were checked against
    sys.modules["mojo_opset"].__version__ = snapshot_version("mojo_opset")  # type: ignore[attr-defined]


def unavailable() -> str | None:
    if "mojo_opset" not in sys.modules and importlib.util.find_spec("mojo_opset") is None:
        return f"mojo_opset is not installed here; {INSTALL}"
    _bare_packages()
    return None


def lib(module: str) -> Library:
    return _LIBS.setdefault(module, Library("mojo_opset", f"--no-deps git+{REPO}"))


def kernels(module: str, *names: str) -> Any:
    if unavailable():
        return f"mojo_opset:{'+'.join(names)}"
    return lib(module).kernels(*(f"{A2}.{module}:{n}" for n in names))


def op(module: str, name: str) -> Any:
    _bare_packages()
    return lib(module).op(f"{A2}.{module}:{name}")


def golden(path: str, **init: Any) -> Any:
    """mojo's own torch golden of a core op ("module:Class", its registered "torch" backend), on the CPU."""
    _bare_packages()
    module, cls_name = path.split(":")
    cls = getattr(lib(f"core.{module}").module(f"mojo_opset.core.operators.{module}"), cls_name)
    return cls.get_backend_impl("torch")(**init)


def spec(name: str, module: str, kernel_names: tuple[str, ...], second: SecondReference | None = None,
         **fields: Any) -> KernelSpec:
    """A mojo op's KernelSpec; `second` pairs its fp64 reference with mojo's torch golden."""
    reference = second if second is not None else fields.pop("reference")
    fields.pop("reference", None)
    return KernelSpec(name=f"mojo_{name}", family="mojo_opset", kernel=kernels(module, *kernel_names),
                      unavailable=unavailable, reference=reference, **fields)
