"""`torch_npu.profiler` of the stand-in: the part triton-ascend's `triton.testing.do_bench_npu` uses.

Documented API (Ascend PyTorch Profiler, https://github.com/Ascend/pytorch/blob/master/docs/en/
ascend_pytorch_profiler/ascend_pytorch_profiler_user_guide.md): `profile(activities, schedule,
on_trace_ready=tensorboard_trace_handler(dir), experimental_config=_ExperimentalConfig(...))`, `prof.step()`,
`schedule(wait, active, warmup, repeat, skip_first)`. Its output lands under
`<dir>/<worker>_<timestamp>_ascend_pt/ASCEND_PROFILER_OUTPUT/`, and op_statistic.csv has one row per
operator type with `Avg Time(us)` in microseconds (CANN's field list:
https://www.hiascend.com/document/detail/en/canncommercial/800/devaids/profiling/atlasprofiling_16_0068.html).

What the stand-in measures: the host wall time of each active step (a step is what runs between two
`prof.step()` calls; on this device every launch has finished when it returns), as one row. The real
profiler reports each kernel's device time, one row per operator type; the units and the layout are
the same, the numbers are not an NPU's.
"""

from __future__ import annotations

import csv
import enum
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OP_STATISTIC_FIELDS = ("Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)",
                       "Avg Time(us)", "Max Time(us)", "Ratio(%)")
# the one operator type the stand-in reports: triton-ascend's collect_files keeps rows starting "triton"
OP_TYPE = "triton_standin_step"


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


class ProfilerLevel(enum.Enum):
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class AiCMetrics(enum.Enum):
    AiCoreNone = "AiCoreNone"
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    MemoryUB = "MemoryUB"
    ResourceConflictRatio = "ResourceConflictRatio"
    L2Cache = "L2Cache"


class ExportType(enum.Enum):
    Db = "db"
    Text = "text"


class _ExperimentalConfig:
    """Accepted and kept; the stand-in collects the same table whatever is asked."""

    def __init__(self, **options: Any) -> None:
        self.options = options


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0) -> Callable[[int], Any]:
    """The action of step n: skip_first steps, then cycles of wait, warmup, active (repeat cycles; 0: forever)."""
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat and step >= cycle * repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if at == cycle - 1 else ProfilerAction.RECORD

    return action


@dataclass
class _Trace:
    steps_us: list[float]


def tensorboard_trace_handler(dir_name: str | None = None, worker_name: str | None = None,
                              analyse_flag: bool = True) -> Callable[[_Trace], Path]:
    """Writes the trace's op_statistic.csv where the real handler puts its ASCEND_PROFILER_OUTPUT."""
    root = Path(dir_name or os.environ.get("ASCEND_WORK_PATH", "."))

    def handler(trace: _Trace) -> Path:
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        stamp = time.strftime("%Y%m%d%H%M%S") + f"{int(time.time() * 1000) % 1000:03d}"
        out = root / f"{worker}_{stamp}_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
        out.mkdir(parents=True, exist_ok=True)
        write_op_statistic(out / "op_statistic.csv", trace.steps_us)
        return out

    return handler


def write_op_statistic(path: Path, steps_us: list[float]) -> None:
    """One row over the recorded steps, in CANN's op_statistic.csv fields (times in microseconds)."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(OP_STATISTIC_FIELDS)
        if steps_us:
            total = sum(steps_us)
            writer.writerow([0, OP_TYPE, "AI_VECTOR_CORE", len(steps_us), f"{total:.3f}", f"{min(steps_us):.3f}",
                             f"{total / len(steps_us):.3f}", f"{max(steps_us):.3f}", "100.0"])


class profile:  # torch_npu.profiler.profile, as torch_npu names it
    """torch_npu.profiler.profile: a context manager stepped by step(); hands its trace to on_trace_ready."""

    def __init__(self, activities: Any = None, schedule: Callable[[int], Any] | None = None,
                 on_trace_ready: Callable[[_Trace], Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None, **kwargs: Any) -> None:
        self.schedule = schedule or (lambda step: ProfilerAction.RECORD)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.recorded: list[float] = []
        self.step_started = 0.0

    def __enter__(self) -> profile:
        self.step_started = time.perf_counter()
        return self

    def step(self) -> None:
        now = time.perf_counter()
        if self.schedule(self.step_num) in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self.recorded.append((now - self.step_started) * 1e6)
        self.step_num += 1
        self.step_started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        if self.on_trace_ready is not None and exc[0] is None:
            self.on_trace_ready(_Trace(self.recorded))

    def start(self) -> None:
        self.__enter__()

    def stop(self) -> None:
        self.__exit__(None, None, None)
