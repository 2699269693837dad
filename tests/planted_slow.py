"""Slow cases for the interruption control: each launch is correct, then waits long enough to be cut."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from parity.cases import by_level, product
from tests import planted

WAIT_S = 30.0


def _slow(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = planted.correct_add.launch(inputs, p)
    mark = os.environ.get("PARITY_SLOW_MARK")  # tells the control that a worker is inside its launch
    if mark:
        Path(mark).mkdir(parents=True, exist_ok=True)
        (Path(mark) / f"{os.getpid()}-{p['N']}").touch()
    time.sleep(WAIT_S)  # the signal arrives here
    return out


SPECS = [replace(planted.correct_add, name="slow_add", launch=_slow,
                 cases=by_level(product(N=[64, 128, 256, 512], dtype=["fp32"])))]
