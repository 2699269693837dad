"""The bishengir-compile memo (parity.backends.ascend.bishengir_memo), over a fake compiler that counts its runs:
the same call twice runs it once and gives back the same answer; its negative controls (other bytes, other
flags, a side-effect flag, a killed run) each run the compiler."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.backends.ascend import bishengir_memo
from parity.backends.ascend.compile import install_memo

FAKE = """#!{python}
import os, signal, sys
from pathlib import Path
with open({count!r}, "a") as f:
    f.write("run\\n")
args = sys.argv[1:]
if "--die" in args:
    os.kill(os.getpid(), signal.SIGKILL)
src = Path(args[0]).read_text()
out = Path(args[args.index("-o") + 1])
if "bad" in src:
    print("error: ub overflow, requires 99 bits")
    sys.exit(1)
(out.parent / (out.name + ".o")).write_text("bin:" + src + ":" + " ".join(args[1:-2]))
(out.parent / "libkernel.so").write_text("lib")
print("UB size = 64 bits")
"""


@pytest.fixture
def compiler(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(the shim, the fake compiler's run log, the memo's store)."""
    count = tmp_path / "runs.log"
    real = tmp_path / "real" / "bishengir-compile"
    real.parent.mkdir()
    real.write_text(FAKE.format(python=sys.executable, count=str(count)))
    real.chmod(0o755)
    store = tmp_path / "store"
    shim = install_memo(tmp_path / "shim", real, store) / "bishengir-compile"
    return shim, count, store


Answer = tuple[subprocess.CompletedProcess[str], dict[str, str]]


def compile_once(shim: Path, workdir: Path, text: str, *flags: str) -> Answer:
    """One call as triton-ascend makes it: a fresh temporary dir with the input, -o <dir>/kernel."""
    workdir.mkdir(parents=True)
    (workdir / "kernel.ttadapter.mlir").write_text(text)
    done = subprocess.run([str(shim), str(workdir / "kernel.ttadapter.mlir"), "--target=Ascend910B3", *flags,
                           "-o", str(workdir / "kernel")], capture_output=True, text=True, check=False)
    files = {p.name: p.read_text() for p in workdir.iterdir() if p.suffix != ".mlir"}
    return done, files


def runs(count: Path) -> int:
    return len(count.read_text().splitlines()) if count.exists() else 0


def test_the_same_call_runs_the_compiler_once_and_answers_the_same(compiler, tmp_path):
    shim, count, _ = compiler
    first, first_files = compile_once(shim, tmp_path / "a", "module {}")
    second, second_files = compile_once(shim, tmp_path / "b", "module {}")
    assert runs(count) == 1
    assert (second.returncode, second.stdout, second.stderr) == (first.returncode, first.stdout, first.stderr)
    assert second_files == first_files == {"kernel.o": "bin:module {}:--target=Ascend910B3", "libkernel.so": "lib"}


def test_a_failing_compile_is_remembered_with_its_message(compiler, tmp_path):
    shim, count, _ = compiler
    answers = [compile_once(shim, tmp_path / d, "bad module")[0] for d in ("a", "b")]
    assert runs(count) == 1
    assert [(a.returncode, a.stdout) for a in answers] == [(1, "error: ub overflow, requires 99 bits\n")] * 2


def test_negative_controls_each_run_the_compiler(compiler, tmp_path):
    shim, count, store = compiler
    compile_once(shim, tmp_path / "a", "module {}")
    compile_once(shim, tmp_path / "b", "module { other }")  # other bytes
    compile_once(shim, tmp_path / "c", "module {}", "--enable-auto-multi-buffer=False")  # other flags
    assert runs(count) == 3
    for d in ("d", "e"):  # a flag whose output lands in the working directory is never remembered
        compile_once(shim, tmp_path / d, "module {}", "--enable-memory-display")
    assert runs(count) == 5
    killed, _ = compile_once(shim, tmp_path / "f", "module {}", "--die")
    assert killed.returncode < 0 or killed.returncode > 128
    compile_once(shim, tmp_path / "g", "module {}", "--die")  # a killed run says nothing: not kept
    assert runs(count) == 7
    assert not [p for p in store.iterdir() if p.name.startswith(".tmp-")]


def test_other_calls_go_straight_to_the_compiler(compiler):
    shim, count, store = compiler
    assert bishengir_memo.compile_call(["--help"]) is None
    subprocess.run([str(shim), "--help"], capture_output=True, check=False)
    assert runs(count) == 1 and not store.exists()


def test_the_memo_is_off_with_its_setting(monkeypatch):
    from parity import settings

    monkeypatch.setenv("PARITY_NO_COMPILE_MEMO", "1")
    assert settings.from_environ(os.environ).no_compile_memo
