"""conftest for LightLLM's unit_tests when recorded outside LightLLM (bench/record_library_ops.sh, LIB=lightllm).

LightLLM's package __init__s import the whole serving engine (models, servers, quantization back ends, their
third-party packages), while its Triton kernel modules need little beyond torch and triton. Every package under
lightllm/ is registered bare (its __init__ not run), so a test imports the kernel module it names and only what
that module imports. Copied into the staged tests' root as conftest.py; the staged root holds lightllm/.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def _bare(name: str, path: Path) -> None:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    module.__package__ = name
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__spec__.submodule_search_locations = [str(path)]
    sys.modules[name] = module


for init in sorted((ROOT / "lightllm").rglob("__init__.py")):
    package = init.parent
    _bare(".".join(package.relative_to(ROOT).parts), package)
