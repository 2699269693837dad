"""Which backend this process runs kernels for, so a launcher can take the path the device would.

Libraries dispatch on the device (fla's Ascend kkt kernel, Liger's NPU block sizes). On the compile
tiers the tensors are CPU tensors, so a launcher cannot tell from them; it asks
`parity.current_backend()` instead: "cuda", "ascend", "interpret", "cuda-compile", "ascend-compile",
"ascend-lowered" (None outside a parity run), or `parity.current_target()` for the device family.
The pytest plugin sets it once per process: one backend per process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

_CURRENT: list[str | None] = [None]
# name -> the backend's class, for its facets; parity.backends registers it (this module sits below the backends)
_FACETS: list[Callable[[str], Any] | None] = [None]


def current_backend() -> str | None:
    """The backend name kernels run for in this process; None outside a parity run."""
    return _CURRENT[0]


def current_target() -> str | None:
    """"cuda" or "ascend": the device family the backend stands for, as it declares (`Backend.target`);
    None for the interpreter and outside a parity run."""
    name = current_backend()
    return None if name is None else backend_facets(name).target


def register_facets(lookup: Callable[[str], Any]) -> None:
    """parity.backends hands over its name -> Backend class lookup when it is imported."""
    _FACETS[0] = lookup


def backend_facets(name: str) -> Any:
    """The class of the backend named `name` (its facets: target, mode, presents, ...)."""
    if _FACETS[0] is None:  # a name can be in scope only once a backend was built: parity.backends is imported
        raise RuntimeError(f"backend {name!r} is in scope, but parity.backends was never imported: import it "
                           "(parity.backends.get_backend) before entering a backend scope")
    return _FACETS[0](name)


def set_current_backend(name: str | None) -> None:
    _CURRENT[0] = name


@contextmanager
def backend_scope(name: str) -> Iterator[None]:
    """current_backend() answers `name` inside the block (the runner wraps each launch)."""
    saved, _CURRENT[0] = _CURRENT[0], name
    try:
        yield
    finally:
        _CURRENT[0] = saved
