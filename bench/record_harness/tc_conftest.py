# Local harness for a subset of upstream Triton's test_core.py (not upstream code): the `device` fixture, names a
# release's triton._internal_testing may lack, (sampling: ../sample_plugin.py).
from __future__ import annotations

import os
from typing import Any

import pytest
import triton
import triton._internal_testing as it

_FALLBACKS = {
    "get_arch": lambda: str(triton.runtime.driver.active.get_current_target().arch),
    "is_hip_cdna4": lambda: False,
    "is_hip_cdna3": lambda: False,
    "is_hip_cdna2": lambda: False,
    "is_hip_cdna": lambda: False,
    "is_xpu": lambda: False,
}
_LISTS = {  # as triton 3.8's _internal_testing has them
    "integral_dtypes": ['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'],
    "int_dtypes": ['int8', 'int16', 'int32', 'int64'],
    "uint_dtypes": ['uint8', 'uint16', 'uint32', 'uint64'],
    "float_dtypes": ['float16', 'float32', 'float64'],
    "float_dtypes_with_bfloat16": ['float16', 'float32', 'float64', 'bfloat16'],
    "torch_float8_dtypes": ['float8_e4m3fn', 'float8_e5m2'],
    "torch_dtypes": ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'float16', 'float32', 'float64', 'bfloat16'],
}
_LISTS["dtypes"] = _LISTS["integral_dtypes"] + _LISTS["float_dtypes"]
_LISTS["dtypes_with_bfloat16"] = _LISTS["dtypes"] + ["bfloat16"]
for _name, _value in _LISTS.items():
    if not hasattr(it, _name):
        setattr(it, _name, _value)
for _name, _fn in _FALLBACKS.items():
    if not hasattr(it, _name):
        setattr(it, _name, _fn)


@pytest.fixture
def device(request: Any) -> str:
    return os.environ.get("TC_DEVICE", "cpu" if it.is_interpreter() else "cuda")



@pytest.fixture(autouse=True)
def _patched_source_kept(request: Any, monkeypatch: Any) -> None:
    """Under the interpreter, test_core's patch_kernel builds each patched kernel with exec, whose text no Triton
    keeps; keep it in linecache under a name of its own (as a GPU run's JITFunction keeps its `src`), so a recorder
    can read the kernel that ran. The kernel's text and globals are upstream's unchanged."""
    module = request.module
    if not it.is_interpreter() or not hasattr(module, "patch_kernel"):
        return
    import hashlib
    import inspect
    import linecache
    import textwrap

    def patch_kernel(template: Any, to_replace: dict[str, str]) -> Any:
        src = textwrap.dedent(inspect.getsource(template.fn))
        for k, v in to_replace.items():
            src = src.replace(k, v)
        # the template's line in test_core.py rides in the name, so bench/replay_groups.py finds its test function
        name = (f"<test_core patched {template.fn.__name__} line {template.fn.__code__.co_firstlineno} "
                f"{hashlib.sha256(src.encode()).hexdigest()[:12]}>")
        linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        scope: dict[str, Any] = {}
        exec(compile(src, name, "exec"), module.__dict__, scope)
        return scope[template.fn.__name__]

    monkeypatch.setattr(module, "patch_kernel", patch_kernel)
