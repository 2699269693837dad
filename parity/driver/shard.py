"""`--shard K/N`: run the K-th of N shares of the selected kernels, so one tier can spread over N CI runners.

Deterministic by kernel: every case of a kernel (its accuracy, compile and specialization tests) lands on one
shard, so no shard compiles what another compiles too. Balanced by a stable weight, the kernel's case count at
the run's level, never by time: the shards of one tier agree on the split on any machine, with no durations file.
Kernels go heaviest first to the lightest shard so far (ties: the lower shard), kernels of equal weight in the
order of their names' sha256. `parity merge` joins the shards' results dirs again (parity.report.shards).

With fewer kernels than shards the extra shards hold none: such a shard runs nothing, says so in a note, exits 0
and still writes its results dir (no records, env.json with its share), which `parity merge` takes as an empty
share. A CI matrix with a fixed N thus works for any selection; `parity merge` still refuses a missing shard.

pytest-split (https://github.com/jerry-git/pytest-split) splits test items by stored durations; it has no way
to keep one kernel's tests together, and without a durations file it splits by item count.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from parity.spec import KernelSpec, SpecError

FORM = "K/N with 1 <= K <= N, e.g. --shard 2/3 (the second of three shares)"
_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    index: int  # K, from 1
    count: int  # N

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(value: str) -> Shard:
    """`--shard K/N`, or an error naming the form."""
    found = _SHARD.fullmatch(value)
    if not found:
        raise argparse.ArgumentTypeError(f"--shard takes {FORM}; got {value!r}")
    index, count = int(found[1]), int(found[2])
    if count < 1 or not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"--shard {value}: K must lie in 1..N; give {FORM}")
    return Shard(index, count)


def _tie(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def assign(weights: dict[str, int], count: int) -> list[list[str]]:
    """The names of each of `count` shares, heaviest first to the lightest share so far."""
    loads = [0] * count
    shares: list[list[str]] = [[] for _ in range(count)]
    for name in sorted(weights, key=lambda n: (-weights[n], _tie(n))):
        i = min(range(count), key=lambda j: (loads[j], j))
        loads[i] += max(weights[name], 1)  # a kernel with no case still costs its collection
        shares[i].append(name)
    return shares


def select(specs: Sequence[KernelSpec], shard: Shard, weight: Callable[[KernelSpec], int]) -> list[KernelSpec]:
    """This shard's specs, in their given order; none when there are fewer kernels than shards and this is one of
    the extra shards."""
    try:
        weights = {s.name: weight(s) for s in specs}
    except SpecError as exc:  # a spec whose cases are malformed: the same error its tests would raise
        raise pytest.UsageError(str(exc)) from None
    mine = set(assign(weights, shard.count)[shard.index - 1])
    return [s for s in specs if s.name in mine]


def empty_note(shard: Shard, kernels: int) -> str:
    return (f"--shard {shard}: no kernel falls to this shard ({kernels} kernel(s) selected for {shard.count} shards; "
            "every kernel runs whole on one shard), so it runs nothing and passes; its results dir holds no records "
            "and `parity merge` takes it as an empty share")


class EmptyShard:
    """A pytest plugin for a shard with no kernels: its suites' items are deselected, the run exits 0 (not pytest's
    5, "no tests collected"), and the note is printed."""

    def __init__(self, note: str) -> None:
        self.note = note

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if items:  # the empty parameter sets pytest would otherwise report as skips
            config.hook.pytest_deselected(items=list(items))
            items[:] = []

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.write_line(f"parity: note: {self.note}")


def apply(config: pytest.Config, specs: Sequence[KernelSpec], weight: Callable[[KernelSpec], int]) -> list[KernelSpec]:
    """This run's share of `specs` under --shard; a share with none registers EmptyShard."""
    share: Shard = config.getoption("--shard")
    mine = select(specs, share, weight)
    if specs and not mine:
        config.pluginmanager.register(EmptyShard(empty_note(share, len({s.name for s in specs}))), "parity-empty-shard")
    return mine


def env_fields(shard: Shard | None, specs: Sequence[KernelSpec]) -> dict[str, Any]:
    """What env.json records of a shard: which share, and the kernels it held (parity merge checks them)."""
    if shard is None:
        return {}
    return {"shard": str(shard), "shard_kernels": sorted(s.name for s in specs)}
