"""A pytest plugin for benchmarks: each parity case's CPU time (this process, every thread) and wall time.

    BENCH_CASE_TIMES=/tmp/times.jsonl python -m pytest -p case_cpu_plugin ...   # bench/ on PYTHONPATH

One JSON line per test item that runs a kernel case: {"kernel", "case", "params", "cpu_s", "wall_s"}, over the
item's whole protocol (setup, call, teardown). CPU time is what a case costs on a shared machine whatever
its load; the wall time is what it took there. Read by bench/record_replay.py's replay half; parity itself
never imports it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    yield
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    callspec = getattr(item, "callspec", None)
    found = callspec.params.get("kernel_case") if callspec is not None else None
    path = os.environ.get("BENCH_CASE_TIMES")
    if not path or not isinstance(found, tuple):
        return
    spec, case = found
    with open(path, "a", encoding="utf-8") as fh:
        line = {"kernel": spec.name, "case": case.id, "params": dict(case.params), "cpu_s": cpu, "wall_s": wall}
        fh.write(json.dumps(line, default=str) + "\n")
