"""parity: one set of Triton kernels, every backend, compared with fp64.

The public API for kernel authors: describe a kernel as a KernelSpec and list it
in a module-level SPECS; see README.md ("Bring your own kernel").
"""

from typing import TYPE_CHECKING, Any

# names resolve on first use (PEP 562), so importing a parity submodule does not import torch: `parity record`
# arms its recorder in every process of a command, and most of them (pip, git hooks) never use torch
_LAZY = {
    "known": "parity.known",
    "current_backend": "parity.spec.context", "current_target": "parity.spec.context",
    "cu_seqlens": "parity.spec.inputs", "l2_normalized": "parity.spec.inputs",
    "logsigmoid_of_randn": "parity.spec.inputs", "nan_empty": "parity.spec.inputs", "rand": "parity.spec.inputs",
    "randn": "parity.spec.inputs", "sigmoid_of_randn": "parity.spec.inputs",
    "Peer": "parity.spec.perf", "PerfTarget": "parity.spec.perf",
    "DEFAULT_TOLERANCES": "parity.spec", "Case": "parity.spec", "DeclinedEnvironment": "parity.spec",
    "ExpectedCompileError": "parity.spec", "KernelSpec": "parity.spec", "KnownDivergence": "parity.spec",
    "SpecError": "parity.spec", "Tolerance": "parity.spec",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'parity' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name)
    value = module if module_name == f"parity.{name}" else getattr(module, name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from parity import known
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
    from parity.spec.context import current_backend, current_target
    from parity.spec.inputs import (
        cu_seqlens,
        l2_normalized,
        logsigmoid_of_randn,
        nan_empty,
        rand,
        randn,
        sigmoid_of_randn,
    )
    from parity.spec.perf import Peer, PerfTarget


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
