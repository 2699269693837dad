"""Compile tiers: a launcher that runs several kernels goes on past a failing one.

Nothing runs on a compile tier, so when one kernel of a launcher fails to compile, the kernels
the launcher calls after it still get their tensors and can still be compiled and recorded.
Each listed kernel's `run` is wrapped for the duration of one case:

- a compile failure the tier has already recorded is swallowed, and the launcher goes on;
- a launch option the installed Triton does not know (upstream rejects triton-ascend's
  `multibuffer=` with a KeyError before compiling) is reported through `on_option`, then the
  launch is retried without it, so the kernel itself still gets a compile verdict.

Anything else (the launcher's own bug, a wrong argument) still raises.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from parity.compile.ascend_only import option_finding
from parity.compile.tools import jit_functions

UNKNOWN_OPTION_RE = re.compile(r"Keyword argument (\w+) was specified but unrecognised")
OnOption = Callable[[Any, str, BaseException, tuple[Any, ...], dict[str, Any], Any], None]


def unknown_option(exc: BaseException) -> str | None:
    """The launch option an exception says this Triton does not recognise, or None."""
    found = UNKNOWN_OPTION_RE.search(str(exc))
    return found.group(1) if found else None


def option_record(jit: Any, option: str, exc: BaseException, kwargs: dict[str, Any],
                  variant_keys: Iterable[str], config_keys: set[str]) -> dict[str, Any]:
    """The compile dict of a rejected launch: error_kind launch_option, no stage reached."""
    from parity.compile.tools import empty_compile, variant_and_config

    compiled = empty_compile(getattr(jit, "__name__", None) or jit.fn.__name__)
    compiled["variant"], compiled["config"] = variant_and_config(kwargs, kwargs, variant_keys, config_keys)
    message = option_finding(option, exc)
    compiled.update(ok=False, stage_reached=None, error_kind="launch_option", message=message,
                  launch_error=message[:300])
    return compiled


def recording_into(compiles: list[dict[str, Any]], variant_keys: Iterable[str],
                   config_keys: set[str]) -> OnOption:
    """An on_option that appends the rejected launch's compile dict to a tier's list of compiles."""
    def on_option(jit: Any, option: str, exc: BaseException, args: Any, kwargs: dict[str, Any], grid: Any) -> None:
        compiles.append(option_record(jit, option, exc, kwargs, variant_keys, config_keys))
    return on_option


def _guarded(jit: Any, on_option: OnOption | None, failures: Callable[[], int]) -> Callable[..., Any]:
    def run(original: Callable[..., Any], *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        for _ in range(8):  # at most one retry per rejected option
            before = failures()
            try:
                return original(*args, grid=grid, warmup=warmup, **kwargs)
            except Exception as exc:
                option = unknown_option(exc)
                if option is not None and option in kwargs and on_option is not None:
                    on_option(jit, option, exc, args, dict(kwargs), grid)
                    kwargs = {k: v for k, v in kwargs.items() if k != option}
                    continue
                if failures() > before:  # recorded by the tier already: let the launcher go on
                    return None
                raise
        raise RuntimeError(f"{getattr(jit, '__name__', jit)}: too many rejected launch options")
    return run


@contextlib.contextmanager
def keep_going(kernels: Iterable[Any], failures: Callable[[], int],
               on_option: OnOption | None = None) -> Iterator[None]:
    """Within: the listed kernels' launches go on past recorded compile failures (see the module doc).

    `failures()` counts the failures the tier has recorded so far; a launch that raised is swallowed
    only when that count grew during it.
    """
    from parity.seams.jit import jit_run

    patched: list[tuple[Any, Callable[[], None]]] = []
    try:
        for jit in jit_functions(k for k in kernels if not isinstance(k, str)):
            if not hasattr(jit, "run") or any(jit is p[0] for p in patched):
                continue
            # a layer on this kernel's own run (an instance attribute over the method)
            patched.append((jit, jit_run(jit).add(_guarded(jit, on_option, failures))))
        yield
    finally:
        for _, remove in reversed(patched):
            remove()


def raised_by_launcher(exc: BaseException) -> bool:
    """Whether the innermost frame that raised is the kernel's or library's own code, not Triton's or
    parity's (parity.errors.is_machinery)."""
    from parity.errors import is_machinery

    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and not is_machinery(str(tb.tb_frame.f_globals.get("__name__") or ""))
