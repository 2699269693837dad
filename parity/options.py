"""The pytest options of parity (`--backend`, `--level`, ...), each validated as it is parsed, with errors
that list the valid values."""

from __future__ import annotations

import argparse

import pytest

from parity.backends import BACKENDS
from parity.driver.shard import parse_shard
from parity.spec import LEVELS


def parse_backend(value: str) -> str:
    if value not in BACKENDS:
        raise argparse.ArgumentTypeError(f"unknown backend {value!r}; valid: {', '.join(BACKENDS)}")
    return value


def parse_level(value: str) -> str:
    if value not in LEVELS:
        raise argparse.ArgumentTypeError(f"unknown level {value!r}; valid: {', '.join(LEVELS)}")
    return value


def parse_seed(value: str) -> int:
    try:
        seed = int(value, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed takes an integer, got {value!r}") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"--seed must be >= 0, got {seed}")
    return seed


def parse_cuda_arch(value: str) -> int:
    from parity.backends.cuda.arch import parse_cuda_arch as parse

    return parse(value)


def parse_ascend_arch(value: str) -> str:
    from parity.backends.ascend.arch import parse_ascend_arch as parse

    return parse(value)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "parity: Triton kernel portability")
    group.addoption("--backend", type=parse_backend, default="interpret",
                    help=f"where kernels run: {', '.join(BACKENDS)} (default: interpret)")
    group.addoption("--level", type=parse_level, default="quick",
                    help="case set: quick or full (default quick; the cuda and ascend nox sessions pass full)")
    group.addoption("--kernels", default="",
                    help="comma-separated kernel names, families, importable modules with SPECS, or MODULE:NAME "
                         "(one kernel of a module)")
    group.addoption("--replay", default=None, metavar="BUNDLE",
                    help="replay the launches `parity record` kept in BUNDLE (a directory) instead of the specs: "
                         "run tiers compare with the recorded outputs, compile tiers compile each specialization")
    group.addoption("--shard", type=parse_shard, default=None, metavar="K/N",
                    help="run the K-th of N shares of the kernels (all cases of a kernel on one shard, balanced by "
                         "case count); `parity merge OUT DIR...` joins the shards' results dirs")
    group.addoption("--seed", type=parse_seed, default=0, help="base seed of every input (default 0)")
    group.addoption("--results-dir", default=None, help="where results go (default reports/<backend>)")
    group.addoption("--no-ref-cache", action="store_true", help="recompute fp64 references")
    group.addoption("--no-fit", action="store_true", help="compile tiers: no search for configs that fit (parity.fit)")
    # flags, not `--perf [MODE]`: an optional value would swallow a following test path
    group.addoption("--perf", action="store_const", const="largest", default=None, dest="perf",
                    help="after the accuracy pass, time each kernel's perf cases (the sizes users run; else its "
                         "largest passing case per dtype) beside its torch baseline and peer, alone on the device "
                         "(the default on run tiers at level full)")
    group.addoption("--perf-all", action="store_const", const="all", dest="perf",
                    help="like --perf, for every passing case")
    group.addoption("--no-perf", action="store_const", const="off", dest="perf", help="never time cases")
    group.addoption("--sanitize", action="store_true",
                    help="GPU tiers: run each accuracy case in a fresh process under compute-sanitizer's memcheck, "
                         "with torch's caching allocator off; an invalid access fails the case (parity.run.sanitize)")
    group.addoption("--retune", action="store_true",
                    help="autotune every perf case afresh instead of reusing the picks earlier runs stored")
    group.addoption("--cuda-arch", type=parse_cuda_arch, default=None,
                    help="cuda-compile target SM: 80, 86, 89 or 90 (default 90)")
    group.addoption("--ascend-arch", type=parse_ascend_arch, default=None,
                    help="ascend-compile target: Ascend910B1, Ascend910B2, Ascend910B3 or Ascend910B4 "
                         "(default Ascend910B3)")
