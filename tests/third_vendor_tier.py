"""A fictitious third vendor's compile tier, declared as a real one would be: one Backend class.

tests/test_third_vendor.py registers it (the one line a real tier adds to parity.backends.BACKENDS) and shows
it reaching the verdict, DIVERGENCE.md, triage and the fit advisor with no other file changed;
tests/test_third_vendor_tracker.py shows its failing record's draft going to its own tracker.
"""

from __future__ import annotations

from typing import ClassVar

from parity.backends.base import Backend, Check
from parity.backends.trackers import UPSTREAM, IssueForm, Tracker
from parity.results import OwnerKind

NAME = "acme-compile"
REGISTRATION = "tests.third_vendor_tier:AcmeCompileBackend"
# its own tracker (a fictitious one, on a domain reserved for examples, RFC 2606): a fork of upstream Triton, so its
# bugs are a Triton-family owner's, filed with Acme; a bug of the upstream it builds on goes to upstream's tracker
TRACKER = Tracker(OwnerKind.TRITON, "triton-acme", "https://example.com/acme/triton-acme/issues/new",
                  IssueForm("[acme] ", (("triton-acme", "triton_acme"), ("Python", "python"), ("Arch", "target_arch")),
                            ""),
                  release_key="triton_acme", dist="triton-acme", base=UPSTREAM)


class AcmeCompileBackend(Backend):
    name = NAME
    mode = "compile"
    device_type = "cpu"
    target = "acme"
    presents = "cuda"
    verifies = frozenset({"vendor-compiler"})
    tracker = TRACKER
    check = Check("Acme (triton-acme)", "builds for {arch}", 0, "build")
    report_rank = 6
    language = "triton"  # upstream's language rules hold here too
    gpu_target = ("acme", "X1", 64)
    launch_device_type: ClassVar[str] = "cuda"
    proves_on: ClassVar[tuple[str, ...]] = ("interpret",)
