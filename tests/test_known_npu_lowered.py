"""The canaries of the known NPU bugs on ascend-lowered (needs triton-ascend and LLVM/MLIR 19; `nox -s ascend-lowered`
runs it, other sessions skip): parity.known_npu's word on each bug (`reproduced`) is what the lowering does to the
bug's canary in tests/planted_npu_bugs.py. The control: a canary sees the wrong result the bug would give (a planted
lost store, a planted shared atomic return), so its pass is evidence that the lowering does not reproduce the bug."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import torch

import parity.known_npu as kn
from parity.run.refcache import ReferenceCache
from parity.spec import KernelSpec


@pytest.fixture(scope="module")
def lowered(ascend_lowered: Any) -> Any:
    return ascend_lowered  # tests/conftest.py prepares the tier


def _canaries() -> dict[str, KernelSpec]:
    from parity.spec import registry

    _, specs = registry.build(["tests.planted_npu_bugs"], include_shared=False)
    return {s.name: s for s in specs}


def _statuses(spec: KernelSpec, backend: Any, tmp_path: Path) -> list[str]:
    from parity.run.runner import run_case

    cache = ReferenceCache(tmp_path, enabled=False)
    return [str(run_case(spec, case, backend, seed=0, cache=cache)[0]["status"]) for case in spec.cases("quick")]


@pytest.mark.parametrize("bug", kn.NPU_BUGS, ids=lambda b: b.id)
def test_each_bugs_word_on_the_lowering_is_what_its_canary_does(bug: kn.NpuBug, lowered: Any, tmp_path: Path) -> None:
    statuses = _statuses(_canaries()[bug.canary], lowered, tmp_path)
    expected = "xfailed" if bug.reproduced else "passed"  # a reproduced bug is its canary's known divergence
    assert statuses and set(statuses) == {expected}, f"{bug.id}: {bug.lowered!r}, but its canary: {statuses}"


def _planted(spec: KernelSpec, harm: Any) -> KernelSpec:
    import dataclasses

    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        return {k: harm(k, v) for k, v in spec.launch(inputs, p).items()}

    return dataclasses.replace(spec, launch=launch)


def _lose_a_pair(name: str, out: torch.Tensor) -> torch.Tensor:
    out = out.clone()
    out.view(-1)[2:4] = float("nan")  # what FlagTree#1245 saw: one 2 x fp32 group left unwritten
    return out


def _share_per_eight(name: str, out: torch.Tensor) -> torch.Tensor:
    if name != "returned":
        return out
    return torch.sort((out // 8) * 8).values  # what FlagTree#1083 saw: each group of 8 lanes got its base


def test_the_canaries_see_the_wrong_results_the_bugs_give(lowered: Any, tmp_path: Path) -> None:
    canaries = _canaries()
    for name, harm in (("npu_bug_masked_store", _lose_a_pair), ("npu_bug_atomic_return", _share_per_eight)):
        statuses = _statuses(_planted(canaries[name], harm), lowered, tmp_path)
        assert statuses and set(statuses) == {"failed"}, f"{name} with the bug's wrong result planted: {statuses}"
