"""A hang the worker's own bound cannot end, in the worker xdist starts after a crash (issue 49).

Under `-n 1`: `hang_kill_worker` kills its worker outright (SIGKILL: no faulthandler, no record); xdist starts a
replacement, whose first case `hang_blocked` sets SIGALRM to be ignored and sleeps. pytest-timeout's signal method
arms SIGALRM and its handler, which then never runs: only the controller can end the case.
`correct_add` and `hang_after` must still run after it. (xdist puts a dead worker's other items at the back of the
queue: of these four items the first worker holds the first two, its replacement gets `hang_blocked` and
`hang_after`, and the third worker `correct_add` and `hang_after`.)
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from typing import Any

import torch

from parity import KernelSpec
from parity.cases import by_level, product
from tests import planted
from tests.planted_faults import spin_kernel

# long enough to outlast any bound the tests use, short enough that an orphan left by a killed test run ends
HANG_S = 300.0


def _kill_self(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    os.kill(os.getpid(), signal.SIGKILL)  # stands in for a store past a red zone's guard that kills the process
    return {"out": inputs["x"]}


def _blocked_sleep(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    # as C code that resets the handler and never returns. Blocking SIGALRM in this thread alone is not enough:
    # the kernel hands a process's SIGALRM to another thread (execnet's), and the handler runs when this one wakes
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    time.sleep(HANG_S)
    return {"out": inputs["x"]}


def _identity(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"].clone()}


def _x(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": torch.ones(p["N"], dtype=torch.float32)}


def _fault(name: str, launch: Any) -> KernelSpec:
    return KernelSpec(name=name, family="faults", kernel=spin_kernel, launch=launch,
                      reference=lambda inputs, p: {"out": inputs["x"].clone()},
                      cases=by_level(product(N=[4], dtype=["fp32"])), make_inputs=_x)


SPECS = [_fault("hang_kill_worker", _kill_self), planted.correct_add, _fault("hang_blocked", _blocked_sleep),
         _fault("hang_after", _identity)]
