"""A fictitious third vendor's compile tier, declared as a real one would be: one Backend class.

tests/test_third_vendor.py registers it (the one line a real tier adds to parity.backends.BACKENDS) and shows
it reaching the verdict, DIVERGENCE.md, triage and the fit advisor with no other file changed.
"""

from __future__ import annotations

from typing import ClassVar

from parity.backends.base import Backend, Check

NAME = "acme-compile"
REGISTRATION = "tests.third_vendor_tier:AcmeCompileBackend"


class AcmeCompileBackend(Backend):
    name = NAME
    mode = "compile"
    device_type = "cpu"
    target = "acme"
    presents = "cuda"
    verifies = frozenset({"vendor-compiler"})
    tracker = "triton"  # a fork of upstream Triton: its drafts go to upstream's tracker first
    check = Check("Acme (triton-acme)", "builds for {arch}", 0, "build")
    report_rank = 6
    language = "triton"  # upstream's language rules hold here too
    gpu_target = ("acme", "X1", 64)
    launch_device_type: ClassVar[str] = "cuda"
    proves_on: ClassVar[tuple[str, ...]] = ("interpret",)
