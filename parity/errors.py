"""Where an error was raised, and the text a record's reason gives it.

The innermost frame in the kernel's or library's own code, skipping the machinery (parity, torch, triton,
pytest, the standard library): every stage that turns an exception into a reason asks here.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback


def error_text(exc: BaseException, limit: int = 600) -> str:
    """The exception's last lines (compilers put the useful part at the end), and where it was raised."""
    from parity.reasons import key_line

    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if exc.__cause__ is not None and says_nothing(text):  # Triton's call site: the reason is the cause's
        text = chained_text(exc)
    if len(text) > limit:  # the compiler's own key line first (its `error:`), then the tail, never a dump alone
        key = key_line(text)[: limit // 2]
        tail = text[-(limit - len(key)):]
        text = tail if key in tail else f"{key}\n… {tail}"  # the key on a line of its own: it stays the key line
    where = raised_at(exc)
    return f"{text} (raised at {where})" if where else text


def chained_text(exc: BaseException) -> str:
    """The exception with the causes it chains, the innermost first: triton's CompilationError carries
    only the source and the caret, and the reason ("Shape element 0 must be a power of 2") is its
    __cause__. The outer exceptions follow it, for the source location."""
    chain, seen = [], exc
    for _ in range(6):
        chain.append("".join(traceback.format_exception_only(type(seen), seen)).strip())
        nxt = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
        if nxt is None or nxt is seen:
            break
        seen = nxt
    if len(chain) == 1:
        return chain[0]
    return "\n".join([chain[-1], *(f"raised from: {text}" for text in reversed(chain[:-1]))])


def says_nothing(text: str) -> bool:
    """Whether an exception's own text ends where its reason should start: Triton's CompilationError of a
    call into a jit helper is the call site's source and a caret, and the reason is its __cause__."""
    lines = [line.strip() for line in str(text).strip().splitlines()]
    return bool(lines) and (set(lines[-1]) <= {"^", "~"} or lines[-1].endswith(":"))


# top-level packages whose frames are the machinery, not the code that went wrong; the standard
# library is machinery too
MACHINERY = ("parity", "torch", "triton", "numpy", "_pytest", "pytest", "pluggy")
_STDLIB = sysconfig.get_paths()["stdlib"]


def is_machinery(module: str) -> bool:
    """Whether a frame of this module is the engine or what it stands on (by top-level package)."""
    top = module.split(".")[0]
    return top in MACHINERY or top in sys.stdlib_module_names


def machinery_dirs() -> list[str]:
    """Where the machinery's packages really are (parity's own included), as dir paths ending in '/'.
    A path merely containing `/parity/` is not enough: a clone named parity holds the user's code too."""
    dirs = []
    for top in MACHINERY:
        module = sys.modules.get(top)
        for folder in list(getattr(module, "__path__", None) or [])[:4]:
            dirs.append(os.path.realpath(folder).replace("\\", "/").rstrip("/") + "/")
    return dirs


def is_machinery_file(path: str) -> bool:
    """As is_machinery, for a frame known only by its file (a forked child's traceback text)."""
    path = path.replace("\\", "/")
    stdlib = path.startswith(_STDLIB) and "-packages/" not in path  # a system site-packages lies under it
    if stdlib:
        return True
    real = os.path.realpath(path) if os.path.isabs(path) else path
    if any(real.startswith(d) or path.startswith(d) for d in machinery_dirs()):
        return True
    # a package not imported here (the child had it): by its install location, never by a bare folder name
    return any(f"-packages/{top}/" in path for top in MACHINERY)


def raised_at(exc: BaseException) -> str | None:
    """file:line of the innermost frame in the kernel's or library's own code: a launcher error such
    as "'str' object cannot be interpreted as an integer" says nothing without it."""
    child: str | None = getattr(exc, "raised_at", None)  # a forked child's location (parity.compile.fork)
    if child:
        return child
    last, tb = None, exc.__traceback__
    while tb is not None:
        if not is_machinery(str(tb.tb_frame.f_globals.get("__name__") or "")):
            last = tb
        tb = tb.tb_next
    if last is None:
        return None
    code = last.tb_frame.f_code
    path = code.co_filename.split("site-packages/")[-1]
    if os.path.isabs(path) and not os.path.relpath(path).startswith(".."):
        path = os.path.relpath(path)
    return f"{path}:{last.tb_lineno}, in {code.co_name}"


def input_error(exc: BaseException) -> BaseException | None:
    """The exception in `exc`'s chain that declares bad input of the case (`parity_error_kind`, e.g. a damaged
    replay bundle's "bundle"), else None: such a case's owner is that input, never the kernel."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(getattr(seen, "parity_error_kind", None), str):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def skip_reason(exc: BaseException) -> str | None:
    """The reason of an exception that marks a case as one this backend cannot run (`parity_skip`)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if getattr(seen, "parity_skip", False):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return None


class CannotRunHere(RuntimeError):
    """This tier cannot run the case at all (raised again in the parent for one a compile child met, e.g. a replay's
    NotReplayable): a skip with the reason, never a finding."""

    parity_skip = True
