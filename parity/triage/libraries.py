"""The one door to "which library ships this kernel", whatever module holds the library table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def library_for(family: str | None, kernels: Iterable[Any] = ()) -> Any:
    """The library's info (name, repo) for a spec's family or kernels, or None for a kernel of no library."""
    from parity.repro import owner

    return owner.library_of(family, kernels)


def library_rule(record: Mapping[str, Any]) -> str | None:
    """Today's rule for a library's kernel (parity.repro.owner): why the failure is the library's, or None."""
    from parity.repro import owner

    return owner.library_owns(record)
