"""parity: one set of Triton kernels, every backend, compared with fp64.

The public API for kernel authors: describe a kernel as a KernelSpec and list it
in a module-level SPECS; see README.md ("Bring your own kernel").
"""

from parity import known
from parity.context import current_backend, current_target
from parity.inputs import (
    cu_seqlens,
    l2_normalized,
    logsigmoid_of_randn,
    nan_empty,
    rand,
    randn,
    sigmoid_of_randn,
)
from parity.perfspec import Peer, PerfTarget
from parity.spec import (
    DEFAULT_TOLERANCES,
    Case,
    DeclinedEnvironment,
    ExpectedCompileError,
    KernelSpec,
    KnownDivergence,
    SpecError,
    Tolerance,
)

__all__ = [
    "DEFAULT_TOLERANCES",
    "Case",
    "DeclinedEnvironment",
    "ExpectedCompileError",
    "KernelSpec",
    "KnownDivergence",
    "Peer",
    "PerfTarget",
    "SpecError",
    "Tolerance",
    "cu_seqlens",
    "current_backend",
    "current_target",
    "known",
    "l2_normalized",
    "logsigmoid_of_randn",
    "nan_empty",
    "rand",
    "randn",
    "sigmoid_of_randn",
]
