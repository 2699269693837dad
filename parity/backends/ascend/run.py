"""Huawei Ascend NPUs through triton-ascend and torch_npu.

Everything but device selection, synchronisation, timing and env probing is the
cuda code path: same kernels, same launchers, same comparison.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from parity.backends.base import Backend, Check
from parity.backends.trackers import ASCEND


def _torch_npu() -> Any:
    return importlib.import_module("torch_npu")


def _npu() -> Any:
    """torch.npu, which importing torch_npu attaches to torch."""
    npu: Any = torch.npu  # type: ignore[attr-defined]  # torch's stubs cannot declare torch_npu's extension
    return npu


# What one unit of do_bench_npu's answer is, in ms, by triton-ascend release. 3.2.0 returns the profiler's
# op_statistic.csv "Avg Time(us)" as it is (collect_single in its python/triton/testing.py), and that column
# is in microseconds (https://www.hiascend.com/document/detail/en/canncommercial/800/devaids/profiling/
# atlasprofiling_16_0068.html); later releases document milliseconds. Read as ms, every NPU time was 1000x.
DO_BENCH_NPU_MS_PER_UNIT = {"3.2": 1e-3}


def do_bench_npu_ms_per_unit(version: str | None = None) -> float:
    """Milliseconds per unit of triton.testing.do_bench_npu's return value for this triton-ascend."""
    if version is None:
        try:
            version = importlib.metadata.version("triton-ascend")
        except importlib.metadata.PackageNotFoundError:
            return 1.0
    return DO_BENCH_NPU_MS_PER_UNIT.get(".".join(version.split(".")[:2]), 1.0)


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, stacklevel=3)


def cann_version() -> str | None:
    """CANN's version from its install tree (set up by CANN's set_env.sh)."""
    home = os.environ.get("ASCEND_TOOLKIT_HOME") or os.environ.get("ASCEND_HOME_PATH")  # CANN's own, not parity's
    if not home:
        return None
    for name in ("version.cfg", "version.info"):
        for path in (Path(home) / name, Path(home) / "compiler" / name):
            if path.exists():
                for line in path.read_text(errors="replace").splitlines():
                    if "version" in line.lower() and "=" in line:
                        return line.split("=", 1)[1].strip()
    return Path(home).resolve().name


class AscendBackend(Backend):
    name = "ascend"
    mode = "run"
    device_type = "npu"
    target = "ascend"
    presents = "npu"
    tracker = ASCEND
    hardware = True
    check = Check("Ascend (triton-ascend)", "NPU arithmetic on {device}", 2, "NPU")
    device_check = "NPU arithmetic"
    report_rank = 1
    language = "triton-ascend"
    gpu_target = ("npu", "Ascend910B3", 0)
    fallback_hint = "nox -s ascend-compile (compile-only, no NPU) or nox -s interpret"

    def unavailable(self) -> str | None:
        try:
            torch_npu = _torch_npu()
        except ImportError as exc:
            return (f"torch_npu is not importable ({exc}); on an Ascend host install CANN, "
                    "then `pip install torch_npu triton-ascend` matching torch "
                    f"{torch.__version__.split('+')[0]} and source CANN's set_env.sh")
        del torch_npu
        if not _npu().is_available():
            return "torch_npu is installed but sees no Ascend NPU (torch.npu.is_available() is False)"
        return None

    def select_device(self, worker_index: int) -> None:
        count = max(_npu().device_count(), 1)
        self.device_index = worker_index % count
        _npu().set_device(self.device_index)

    def synchronize(self) -> None:
        _npu().synchronize()

    def release_memory(self) -> None:
        _npu().empty_cache()

    def time_ms(self, fn: Callable[[], Any]) -> float:
        """Milliseconds per call: triton-ascend's profiler-based do_bench_npu where it works, else NPU events."""
        try:
            from triton.testing import do_bench_npu
        except ImportError:
            do_bench_npu = None
        if do_bench_npu is not None:
            try:
                raw = float(do_bench_npu(fn, warmup=10, active=30))
            except ImportError as exc:  # 3.2's reader of the profile imports pandas
                _warn_once(f"triton.testing.do_bench_npu cannot read its profile ({exc}); timing with "
                           "torch.npu.Event instead (install pandas for the profiler's kernel times)")
            else:
                if math.isfinite(raw) and raw > 0:  # inf: the profiler wrote no op_statistic.csv
                    return raw * do_bench_npu_ms_per_unit()
                _warn_once(f"triton.testing.do_bench_npu measured {raw}; timing with torch.npu.Event instead")
        return self._event_ms(fn)

    def _event_ms(self, fn: Callable[[], Any]) -> float:
        start = _npu().Event(enable_timing=True)
        end = _npu().Event(enable_timing=True)
        for _ in range(5):
            fn()
        self.synchronize()
        start.record()
        for _ in range(20):
            fn()
        end.record()
        self.synchronize()
        return float(start.elapsed_time(end)) / 20

    def memory_gib(self) -> float | None:
        props = _npu().get_device_properties(self.device_index)
        gib: float = props.total_memory / 2**30
        return gib

    def device_name(self) -> str | None:
        name: str = _npu().get_device_name(self.device_index)
        return name

    def env(self) -> dict[str, Any]:
        torch_npu = _torch_npu()
        info: dict[str, Any] = {
            "device_name": _npu().get_device_name(self.device_index),
            "device_count": _npu().device_count(),
            "torch_npu": getattr(torch_npu, "__version__", None),
            "cann": cann_version(),
        }
        try:
            from triton.runtime.driver import driver

            props = driver.active.utils.get_device_properties(self.device_index)
            info["num_aicore"] = props.get("num_aicore")
            info["num_vectorcore"] = props.get("num_vectorcore")
            info["target_arch"] = driver.active.get_current_target().arch
        except Exception as exc:  # probing must never stop a run
            info["target_arch_error"] = str(exc)[:200]
        return info
