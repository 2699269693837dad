"""The roof a kernel is measured against: what this machine really does, beside its datasheet.

The perf pass measures two figures once per run with torch on the device (`measure_roof`): a large
device-to-device copy (the practical bandwidth ceiling of memory-bound kernels) and a large bf16
torch.matmul (the dense math ceiling of compute-bound ones). Everything else here is pure arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

# Vendor datasheet figures (dense, no sparsity), each with its public source.
# HBM in GB/s, math in TFLOP/s by input dtype.
DATASHEETS: dict[str, dict[str, Any]] = {
    "NVIDIA H200": {"hbm_gbps": 4800.0, "bf16_tflops": 989.0, "fp16_tflops": 989.0, "fp32_tflops": 67.0,
                    "source": "https://www.nvidia.com/en-us/data-center/h200/"},
    "NVIDIA H100 80GB HBM3": {"hbm_gbps": 3350.0, "bf16_tflops": 989.0, "fp16_tflops": 989.0, "fp32_tflops": 67.0,
                              "source": "https://www.nvidia.com/en-us/data-center/h100/"},
}
# Ascend 910B: no vendor datasheet with HBM bandwidth and dense bf16 rate was found; third-party pages
# disagree (HBM 400 GB/s to 1.2 TB/s, fp16 280 to 320 TFLOP/s), so none is quoted. Measured roofs still apply.
NO_SOURCED_PEAK = "no sourced peak"

COPY_BYTES = 1 << 30  # 1 GiB each way: far past any L2, a few ms on an HBM device
MATMUL_N = 8192  # bf16 8192³: cuBLAS (or the NPU's matmul) at its dense rate


@dataclass(frozen=True)
class Roof:
    """What one device does, measured in this run, and what its datasheet says (None where unsourced)."""

    device: str | None
    copy_gbps: float | None  # bytes read + written per second by a device-to-device copy
    matmul_tflops: float | None  # bf16 torch.matmul at MATMUL_N³
    datasheet: Mapping[str, Any] = field(default_factory=dict)  # DATASHEETS entry, or {} where unsourced
    error: str | None = None  # why a measurement is missing

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def datasheet_for(device: str | None) -> dict[str, Any]:
    return dict(DATASHEETS.get(device or "", {}))


def copy_gbps(device: str, time_ms: Callable[[Callable[[], Any]], float]) -> float:
    """Bytes read + written per second by a device-to-device copy of COPY_BYTES."""
    import torch

    src = torch.empty(COPY_BYTES, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    return 2 * COPY_BYTES / time_ms(lambda: dst.copy_(src)) / 1e6


def matmul_tflops(device: str, time_ms: Callable[[Callable[[], Any]], float]) -> float:
    """Dense bf16 torch.matmul rate at MATMUL_N³."""
    import torch

    a = torch.randn(MATMUL_N, MATMUL_N, device=device).to(torch.bfloat16)
    b = torch.randn(MATMUL_N, MATMUL_N, device=device).to(torch.bfloat16)
    return 2 * MATMUL_N**3 / time_ms(lambda: torch.matmul(a, b)) / 1e9


def measure_roof(device: str, device_name: str | None, time_ms: Callable[[Callable[[], Any]], float]) -> Roof:
    """Copy bandwidth and bf16 matmul rate on `device`, with the backend's timer (I/O edge: allocates)."""
    figures: dict[str, float | None] = {}
    errors = []
    for name, probe in (("copy", copy_gbps), ("matmul", matmul_tflops)):
        try:
            figures[name] = probe(device, time_ms)
        except Exception as exc:  # a missing roof costs the "% of roofline" column, not the run
            figures[name] = None
            errors.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
    return Roof(device_name, figures["copy"], figures["matmul"], datasheet_for(device_name),
                "; ".join(errors) or None)


def math_rate(roof: Roof, dtype: str | None) -> tuple[float | None, float | None]:
    """(measured, datasheet) TFLOP/s for a dtype: bf16 and fp16 share the measured bf16 matmul rate;
    other dtypes have no measured rate (only bf16 is measured)."""
    measured = roof.matmul_tflops if dtype in ("bf16", "fp16") else None
    sheet = roof.datasheet.get(f"{dtype}_tflops") if dtype else None
    return measured, sheet


def bound_of(n_bytes: float | None, n_flops: float | None, roof: Roof, dtype: str | None,
             declared: str | None = None) -> str | None:
    """'memory' or 'compute': the declared one, else where the kernel's intensity sits against the
    machine's measured balance (flops per byte at which the two roofs meet)."""
    if declared:
        return declared
    if not n_bytes and not n_flops:
        return None
    if not n_flops:
        return "memory"
    if not n_bytes:
        return "compute"
    rate = math_rate(roof, dtype)[0] or math_rate(roof, dtype)[1]
    bandwidth = roof.copy_gbps or roof.datasheet.get("hbm_gbps")
    if not rate or not bandwidth:
        return "memory"
    balance = rate * 1e12 / (bandwidth * 1e9)
    return "compute" if n_flops / n_bytes > balance else "memory"


def figures(n_bytes: float | None, n_flops: float | None, ms: float, roof: Roof | None, dtype: str | None,
            declared: str | None = None) -> dict[str, Any]:
    """GB/s, TFLOP/s, the bound, and the share of the measured roof and of the datasheet figure (percent)."""
    gbps = n_bytes / ms / 1e6 if n_bytes and ms > 0 else None
    tflops = n_flops / ms / 1e9 if n_flops and ms > 0 else None
    out: dict[str, Any] = {"gbps": gbps, "tflops": tflops, "bound": None, "roof": None, "roof_unit": None,
                           "pct_of_roofline": None, "datasheet": None, "pct_of_datasheet": None}
    if roof is None:
        return out
    bound = bound_of(n_bytes, n_flops, roof, dtype, declared)
    if bound == "memory":
        achieved, measured, sheet, unit = gbps, roof.copy_gbps, roof.datasheet.get("hbm_gbps"), "GB/s copy"
    elif bound == "compute":
        achieved, unit = tflops, f"TFLOP/s {dtype} matmul"
        measured, sheet = math_rate(roof, dtype)
    else:
        return out
    out.update(bound=bound, roof=measured, roof_unit=unit, datasheet=sheet)
    if achieved is not None and measured:
        out["pct_of_roofline"] = 100 * achieved / measured
    if achieved is not None and sheet:
        out["pct_of_datasheet"] = 100 * achieved / sheet
    return out


def roof_line(roof: Mapping[str, Any] | None) -> str:
    """One sentence for a report: the measured roofs beside the datasheet's."""
    if not roof:
        return "No roof was measured."
    sheet = roof.get("datasheet") or {}

    def beside(key: str) -> str:
        return f"datasheet {sheet[key]:g}" if sheet.get(key) else NO_SOURCED_PEAK

    copy, mm = roof.get("copy_gbps"), roof.get("matmul_tflops")
    parts = [f"copy {copy:.0f} GB/s ({beside('hbm_gbps')})" if copy else "copy not measured",
             f"bf16 matmul {mm:.0f} TFLOP/s ({beside('bf16_tflops')})" if mm else "bf16 matmul not measured"]
    source = f"; datasheet: {sheet['source']}" if sheet.get("source") else ""
    err = f"; {roof['error']}" if roof.get("error") else ""
    return f"Measured on {roof.get('device') or 'this device'}: " + ", ".join(parts) + source + err + "."
