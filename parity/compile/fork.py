"""One case in a forked child, so what a launcher's code keeps in memory cannot reach the next case.

On the compile tiers kernels compile in the worker process. A library keeps its own state between
calls (a dict of compiled kernels, an autotune pick, a LibEntry cache) that parity cannot clear,
so the second case of a kernel finds the first case's kernel and compiles nothing ("the launcher
compiled no kernel for this case"), and results depend on case order. In a forked child each
case starts from the state the worker had before any case ran.

The rule (`wants_fork`): a spec's `fork` field when set; otherwise fork when a kernel the spec names
comes from another top-level package than its launcher (a library's ops called from a spec
module), because that package's state is out of parity's reach. PARITY_FORK=0 turns it off for
the whole run (e.g. to step through a launcher in a debugger).

The child's value comes back as JSON (parity.compile.isolate); a child that raises gives its
traceback, one that dies gives its signal or exit code: the case is an error, never lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from parity import settings
from parity.spec import KernelSpec

# a whole case, every compile included; each compile has its own limit (PARITY_COMPILE_TIMEOUT_S)


class ForkedCaseError(RuntimeError):
    """The forked case raised, crashed or hung; the message says which, with the child's last words."""

    # set only where they apply (readers ask with getattr(..., None)): where and what the child raised, its output
    raised_at: str | None
    child_traceback: str
    output: str


def _top_package(obj: Any) -> str | None:
    from parity.compile.tools import unwrap

    module = getattr(unwrap(obj)[-1], "__module__", None) or getattr(obj, "__module__", None)
    return module.split(".")[0] if isinstance(module, str) else None


def wants_fork(spec: KernelSpec) -> bool:
    """Whether this spec's compile-tier cases run in a forked child (see the module docstring)."""
    if not settings.current().fork:
        return False
    if spec.fork is not None:
        return spec.fork
    launcher = _top_package(spec.launch)
    # a label instead of kernels (the library did not import): the spec's cases error out anyway
    return any(_top_package(k) not in (launcher, None) for k in spec.kernels if not isinstance(k, str))


def run_forked(fn: Callable[[], Any], *, what: str, timeout_s: float | None = None) -> Any:
    """fn() in a forked child; its JSON value, or ForkedCaseError naming what went wrong in `what`."""
    timeout_s = settings.current().case_timeout_s if timeout_s is None else timeout_s
    from parity.compile.isolate import run_isolated

    result = run_isolated(fn, timeout_s=timeout_s)
    if result.ok:
        return result.value
    if result.error is not None:  # the child raised: a record quotes its exception first, then where
        said, where = child_exception(result.error)
        error = ForkedCaseError(f"{said}\n({what} raised it in its forked child)")
        error.raised_at, error.child_traceback = where, result.error
        raise error
    # records quote a message's tail, so the verdict goes last; the child's full output stays on the error
    said = _last_words(result.output)
    said = f"; its last output: {said}" if said else ""
    verdict = (f"no result after {timeout_s:g} s, the child was killed (PARITY_CASE_TIMEOUT_S sets the limit)"
               if result.timed_out else result.crashed or "the child gave no result")
    error = ForkedCaseError(f"{what}{said}\n{what}: {verdict} in its forked child")
    error.output = result.output
    raise error


def child_exception(traceback_text: str) -> tuple[str, str | None]:
    """A child's formatted traceback -> (its exception lines, file:line of the innermost frame outside
    parity's machinery), so the record reads like one of an in-process case."""
    from parity.errors import is_machinery_file

    lines = traceback_text.strip().splitlines()
    frames = [i for i, line in enumerate(lines) if line.startswith('  File "')]
    if not frames:
        return traceback_text.strip(), None
    tail = lines[frames[-1] + 1:]
    said = "\n".join(line for line in tail if not line.startswith("    ")).strip() or lines[-1]
    where = None
    for i in reversed(frames):
        m = re.match(r'  File "(.+)", line (\d+), in (.+)', lines[i])
        if m and not is_machinery_file(m.group(1)):
            where = f"{m.group(1).split('site-packages/')[-1]}:{m.group(2)}, in {m.group(3)}"
            break
    return said, where


def _last_words(output: str, limit: int = 300) -> str:
    """The last line a dying child printed before faulthandler's stack dump (which says little here)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    dump = next((i for i, line in enumerate(lines) if line.startswith("Fatal Python error")), len(lines))
    return (lines[:dump] or [""])[-1][:limit]
