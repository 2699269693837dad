"""The compiler's own key line in a long message: its `error:` text, not type dumps, warnings or arrays.

MLIR pass pipelines print the failing op with its full type signature, `linalg.yield` remarks and
notes around the one line that says what is wrong ("error: expected offsets to be non-negative, but got
-16"); a numpy comparison prints whole arrays. A reason keeps that line first. This is the one rule: a
record's reason, triage's evidence, an issue's title and the report's rows (parity.report.findings) all ask here.
"""

from __future__ import annotations

import re

_ERROR = re.compile(r"(?:^|\s)error:\s*(.+)", re.IGNORECASE)
_NOISE = re.compile(r"linalg\.yield|^\s*(?:note|warning|remark):|^\s*%[\w#]+ = |^\s*\^bb|^\s*[\[\]\d.,eE+\-\s]+$|"
                    r"^\s*(?:array|tensor)\(|tensor<[^>]*>.*tensor<[^>]*>.*tensor<", re.IGNORECASE)
_EXC = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception))(?::\s*|\(\s*['\"]?)(\S.*?)(?:['\"]?\))?$")
# an exception written as its repr, e.g. the cause among a wrapper's args: TypeError("unsupported operand …")
_REPR_START = re.compile(r"\b(\w+(?:Error|Exception))\(")
_REPR_ARG = re.compile(r"""(["'])(.+?)(?<!\\)\1\s*[,)]""", re.DOTALL)
# an exception message that is only where it happened ("CompilationError: at 36:14:"): its reason follows
_ONLY_AT = re.compile(r"^at \d+:\d+:?$")
# where parity.errors.error_text says the error was raised, after the message's last line
_RAISED_AT = re.compile(r"\s*\(raised at [^()]*(?:\([^()]*\)[^()]*)*\)$")
# the line after which an exception chain's outer exceptions follow (parity.compile.tools.exception_text)
_RAISED_FROM = "raised from:"
# a message that is a kernel helper's source (Triton's CompilationError quotes the jit function it failed in)
_SOURCE = re.compile(r"^\s*(?:def |@\w)")
_DEF = re.compile(r"def (\w+)\(")
# a line that only announces that an error follows ("[Pass] encounters error:")
_ANNOUNCE = re.compile(r"(?:error|failed)\s*:?\s*$", re.IGNORECASE)
# a source excerpt's line (numbered, a caret, a decorator or a tl. call) and an array's repr: never the key line
_SOURCE_LINE = re.compile(r"^\s*(?:\d+\s*[|:]|[~^]+\s*$|@triton|def |tl\.|\w+\s*=\s*tl\.)")
_ARRAY = re.compile(r"(?:tensor|array)\(\[|\[\s*-?\d+\.\d+(?:e[+-]\d+)?,\s*-?\d")
# an announcement that is a Python exception's, not a compiler's
_EXC_NAME = re.compile(r"^\s*(?:[\w.]+\.)?\w+(?:Error|Exception)\b")


def wrapped_cause(text: str) -> str | None:
    """The cause inside an exception that quotes source: Triton's frontend raises
    `CompilationError('def gelu_tanh(x): …', <ast node>, 'TypeError("unsupported operand …")')`, whose
    first line is the helper's source; the line that says what went wrong is the TypeError among its args.
    None when no exception in the text quotes source, or none names a cause."""
    text = str(text or "")
    wrapper, causes = None, []
    for start in _REPR_START.finditer(text):
        arg = _REPR_ARG.match(text, start.end())
        if not arg:
            continue
        message = arg.group(2).replace("\\'", "'").replace('\\"', '"')
        if _SOURCE.match(message):
            wrapper = wrapper or _DEF.search(message)
        else:
            causes.append(f"{start.group(1)}: {' '.join(message.split())}")
    if wrapper is None or not causes:
        return None
    return f"{causes[-1]} (in {wrapper.group(1)})"


def _source_message(line: str) -> bool:
    found = _EXC.match(line)
    return bool(found and _SOURCE.match(found.group(2).strip("'\"")))


def after_caret(text: str) -> str:
    """Triton's frontend error: `at L:C:`, the source, a caret line, then the reason (up to the chain's outer
    exceptions). "at L:C: <reason>", or '' when nothing follows the caret."""
    raw = [_RAISED_AT.sub("", line).strip() for line in str(text or "").splitlines()]
    # Triton marks the column with one caret; Python's tracebacks underline with runs of ^ and ~ instead
    carets = [i for i, line in enumerate(raw) if line == "^"]
    if not carets:
        return ""
    reason = []
    for line in raw[carets[0] + 1:]:
        if line.startswith(_RAISED_FROM):
            break
        reason.append(line)
    said = " ".join(" ".join(reason).split())
    if not said:
        return ""
    found = _EXC.match(said)
    said = f"{found.group(1)}: {found.group(2).strip()}" if found else said
    where = re.search(r"\bat (\d+:\d+):", "\n".join(raw[: carets[0]]))
    return f"at {where.group(1)}: {said}" if where else said


def key_line(text: str) -> str:
    """The line that says what is wrong: the first `error:` message that is not a type dump, else the cause a
    source-quoting exception wraps, else the last exception line that is not source, else the first line
    that is not noise."""
    lines = [_RAISED_AT.sub("", line).strip() for line in str(text or "").splitlines() if line.strip()]
    for line in lines:
        found = _ERROR.search(line)
        if found and not _NOISE.search(found.group(1)):
            return found.group(1).strip()
    cause = wrapped_cause(text)
    if cause:
        return cause
    for line in reversed(lines):
        found = _EXC.match(line)
        if found and not _NOISE.search(line) and not _source_message(line) and not _ONLY_AT.match(found.group(2)):
            return f"{found.group(1)}: {found.group(2).strip()}"
    after = after_caret(text)
    if after:
        return after
    clean = [line for line in lines if not _NOISE.search(line)]
    said = [line for line in clean if not _SOURCE_LINE.match(line) and not _ARRAY.search(line)]
    if said:
        return _completed(said, 0, said[0])
    return (clean or lines or [""])[0]


def _completed(lines: list[str], i: int, text: str) -> str:
    """A line that only announces an error ("[ConvertLinalgRToBinary] encounters error:") joined with the next
    line that says something, so a key line never ends at a colon; or said to be alone."""
    if not _ANNOUNCE.search(text):
        return text
    following = next((line for line in lines[i + 1:] if not _ANNOUNCE.search(line)), None)
    if following:
        return f"{text} {following}"
    return text if _EXC_NAME.match(text) else f"{text} (the compiler printed nothing after it)"
