"""pytest plugin of `nox -s ascend-standin` (`-p standin_plugin`): the perf pass's roof probes at sizes the host CPU
behind the stand-in finishes. On an NPU they are a 1 GiB copy and a bf16 8192³ matmul (parity.perf.roofline); on two
x86 cores that matmul alone takes minutes per call and do_bench_npu makes 41 calls. The probes still run through the
stand-in's torch.npu and do_bench_npu, only smaller; the figures are the host's and name the stand-in device."""

from __future__ import annotations

import pytest

ROOF_COPY_BYTES = 64 << 20
ROOF_MATMUL_N = 512


def pytest_configure(config: pytest.Config) -> None:
    from parity.perf import roofline

    roofline.COPY_BYTES = ROOF_COPY_BYTES
    roofline.MATMUL_N = ROOF_MATMUL_N
