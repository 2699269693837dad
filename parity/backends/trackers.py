"""The trackers of the compiler families parity knows, each held by its tiers' Backend (`Backend.tracker`).

The Tracker type is parity.findings.tracker's (findings are made of it); a vendor with its own tracker declares one
beside its Backend class instead of adding it here.
"""

from __future__ import annotations

from parity.findings.tracker import IssueForm, Tracker
from parity.results.kinds import OwnerKind

UPSTREAM = Tracker(
    OwnerKind.TRITON, "Triton", "https://github.com/triton-lang/triton/issues/new/choose",
    IssueForm("", (("Triton", "triton"), ("torch", "torch"), ("Python", "python"), ("GPU", "device_name"),
                   ("Arch", "target_arch"), ("Driver", "driver"), ("CUDA", "cuda"), ("OS", "platform")), ""),
    release_key="triton", dist="triton")

ASCEND = Tracker(
    OwnerKind.TRITON_ASCEND, "triton-ascend", "https://github.com/triton-lang/triton-ascend/issues/new/choose",
    IssueForm("[Bug]: ", (("Triton-Ascend", "triton_ascend"), ("CANN", "cann"), ("torch_npu", "torch_npu"),
                          ("ascendnpu-ir", "ascendnpu_ir"), ("torch", "torch"), ("Python", "python"),
                          ("Device", "device_name"), ("Arch", "target_arch"), ("OS", "platform")),
              " (and torch_npu)"),
    release_key="triton_ascend", dist="triton-ascend", base=UPSTREAM)

__all__ = ["ASCEND", "UPSTREAM", "IssueForm", "Tracker"]
