"""The words a record's status and owner may hold, as enums (str-valued: each equals, and is written as, its word)."""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """A record's status. str-valued: it equals, and is written to results.jsonl as, its plain word."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    CRASHED = "crashed"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:  # f-strings print the word on every Python (3.12 changed Enum.__format__)
        return str(self.value)

    __hash__ = str.__hash__  # Enum hashes the member's name: a set of words must find its members


class OwnerKind(str, Enum):
    """Who must act on a failing case (`owner.who`). str-valued, as Status."""

    AUTHOR = "author"
    LIBRARY = "library"
    TRITON = "triton"
    TRITON_ASCEND = "triton-ascend"
    TIER = "tier"
    ENVIRONMENT = "environment"
    # the spec's tolerance is tighter than a correct kernel's rounding allows (parity.run.rounding): no draft
    TOLERANCE = "tolerance"
    # a replay bundle that is missing, truncated or altered: nothing in it says anything about the kernel
    BUNDLE = "bundle"
    # a random kernel's stream differs by compiler while its distribution agrees (parity.triage.random_stream): no draft
    RANDOM = "random"

    def __str__(self) -> str:
        return str(self.value)

    __hash__ = str.__hash__
