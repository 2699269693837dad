# Local harness (not any library's code): `-p sample_plugin` keeps at most SAMPLE_PER_TEST parametrizations of each
# test function, evenly spaced with the first and last kept, so a recording covers every test function in bounded time.
from __future__ import annotations

import os
from typing import Any


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    per = int(os.environ.get("SAMPLE_PER_TEST", "0"))
    if per <= 0:
        return
    groups: dict[tuple[str, str], list[Any]] = {}
    for item in items:
        groups.setdefault((item.nodeid.split("::")[0], item.originalname), []).append(item)
    keep: set[int] = set()
    for group in groups.values():
        if len(group) <= per:
            keep.update(id(i) for i in group)
            continue
        step = (len(group) - 1) / (per - 1) if per > 1 else 0
        keep.update(id(group[round(k * step)]) for k in range(per))
    items[:] = [i for i in items if id(i) in keep]
