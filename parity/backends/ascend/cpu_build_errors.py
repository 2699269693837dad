"""The one error of the ascend-lowered build: a module the tier cannot lower or run (the case is skipped)."""

from __future__ import annotations


class LoweringUnsupported(RuntimeError):
    """The pipeline cannot lower or run this module (an op or a type): the case is skipped, with this reason."""

    parity_skip = True
