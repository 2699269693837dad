"""Key lines keep the cause: Triton's frontend reason after the source excerpt (also when it is a jit helper's,
chained as the cause), an exception's text when a cut would keep only its name, and a stage announcement that
nothing follows falls back to the exception triton-ascend wrapped. Each with its control."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from parity.backends.ascend.diagnostics import announced_only, with_own_message
from parity.reasons import key_line
from parity.report import findings
from parity.repro.issue import title_text
from tests.tier_python import ROOT


def compiled(kernel: str) -> dict:
    """Triton's frontend error for a planted kernel, compiled (not interpreted) in a child, with its key lines."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-m", "tests.planted_frontend", kernel], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_a_helpers_frontend_error_keeps_its_reason_in_the_record_and_both_key_lines():
    got = compiled("calls_a_broken_helper")
    assert "no_such_attribute" not in got["own"]  # the call site's own text ends at the caret: the control
    assert "'tensor' object has no attribute 'no_such_attribute'" in got["text"]
    assert got["key"] == "AttributeError: 'tensor' object has no attribute 'no_such_attribute'"
    row = got["row"]
    assert row.endswith("AttributeError: 'tensor' object has no attribute 'no_such_attribute'"), row
    assert "raised from" not in row and "def " not in row  # the outer call site's source is not the reason
    assert "printed nothing" not in row


def test_a_kernels_own_frontend_error_reads_the_same_without_a_cause():
    got = compiled("broken_itself")
    assert got["key"] == "AttributeError: 'tensor' object has no attribute 'no_such_attribute'", got
    assert got["row"] == got["key"]  # one rule: the report's row reads as the record's key line


def test_a_builtins_error_at_the_call_site_keeps_its_reason():
    """As gdn_npu_solve_tril read on the H200 ("CompilationError: at 36:14:" and nothing more): tl.zeros with a
    shape that is not a power of 2; the reason is two causes down, under tl.zeros' own source."""
    got = compiled("zeros_not_power_of_2")
    assert "power of 2" not in got["own"]  # the control: the call site's own text has no reason
    assert got["key"] == "ValueError: Shape element 0 must be a power of 2", got["key"]
    assert got["row"].endswith("Shape element 0 must be a power of 2"), got["row"]


def test_a_reason_after_the_caret_that_is_no_exception_is_kept_and_a_bare_location_is_never_the_key():
    text = ("triton.compiler.errors.CompilationError: at 36:14:\n    b = x[0]\n              ^\n"
            "unsupported tensor index: constexpr[0]")
    assert key_line(text) == "at 36:14: unsupported tensor index: constexpr[0]"
    assert findings.key_line(text) == "at 36:14: unsupported tensor index: constexpr[0]"
    # control: with nothing after the caret there is nothing to add, and the line says where it failed
    assert key_line("CompilationError: at 36:14:\n    b = x[0]\n              ^") == "CompilationError: at 36:14:"


def test_a_cut_never_keeps_only_an_exceptions_name():
    long_token = "/very/long/path/" + "x" * 120
    clipped = findings.clip(f"launcher raised TypeError: {long_token}", 80)
    assert not clipped.rstrip(" …").endswith("TypeError") and "TypeError: /very" in clipped, clipped
    # control: an ordinary sentence is still cut at its clause
    assert findings.clip("ub overflow: requires many bits; " + "more words " * 20, 60).endswith("bits; …")


def test_a_python_exception_that_ends_in_error_is_not_a_silent_compiler():
    assert "printed nothing" not in findings.key_line("InterpreterError: AttributeError")
    # control: a compiler's stage announcement with nothing after it still says so
    assert "printed nothing" in findings.key_line("[ConvertLinalgRToBinary] encounters error:")


def test_an_announcement_alone_falls_back_to_the_wrapped_exceptions_own_message_and_titles_cut_at_a_word():
    announced = "[ConvertLinalgRToBinary] encounters error:"
    tool = subprocess.CalledProcessError(1, ["bishengir-compile", "kernel.ttadapter.mlir"],
                                         output=b"LLVM ERROR: unsupported hivm op\n")
    message = with_own_message(announced, tool)
    assert announced_only(announced) and "returned non-zero exit status" in message
    assert "LLVM ERROR: unsupported hivm op" in message
    title = title_text(message)
    assert "encounters error:" not in title and "unsupported hivm op" in title, title
    # controls: compiler output after the announcement is kept as it is; a long title ends at a word
    said = f"{announced}\nerror: 'hivm.hir.vbrc' op operand #0 must be ub memref"
    assert with_own_message(said, tool) == said and not announced_only(said)
    words = "error: " + " ".join(["operand"] * 30)
    cut = title_text(words, 60)
    assert cut.endswith(" …") and cut[:-2].split()[-1] == "operand", cut


def test_a_python_traceback_underline_is_not_tritons_caret():
    text = ("Traceback (most recent call last):\n  File \"k.py\", line 3, in f\n    y = g(x)\n        ^^^^\n"
            "  File \"k.py\", line 9, in g\n    return x.shape[5]\n           ~~~~~~~^^^\n"
            "IndexError: tuple index out of range")
    assert key_line(text) == "IndexError: tuple index out of range"
    assert findings.key_line(text) == "IndexError: tuple index out of range"
