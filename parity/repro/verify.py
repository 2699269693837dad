"""Keep a repro folder only when its script fails, in a fresh process, the way its record did.

A repro that exits 0 standalone (the failure lived outside the recorded launches: a launcher's
own step after the kernel, an environment variable of the run), or that crashes differently,
would send its reader a false bug. So, once a folder is written, its script runs once with
`sys.executable` in a new process, cwd the folder, with no parity on PYTHONPATH and a time limit.
It is kept when it exits 1 and prints the FAIL line of the kind the record holds; otherwise the
folder (script and draft) is removed, the record keeps its verdict and `repro_error` says why.
A folder the record does not name (half written before a raise) is removed too, so every folder
under repros/ is one a record names.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERIFY_TIMEOUT_S = 120.0
# the script a folder stands on: the first of these it holds (ascend-lowered's rebuild of the lowered
# modules reproduces on the host; its repro.py replays the Triton launch, which only fails on an NPU)
SCRIPTS = ("lowered/repro_lowered.py", "repro.py")
OUTPUT_TAIL = 400  # characters of the script's last output quoted in repro_error


@dataclass(frozen=True)
class Outcome:
    """How one fresh run of a repro script ended; returncode None: killed at the time limit."""

    returncode: int | None
    output: str

    @property
    def fail_line(self) -> str | None:
        return next((line for line in reversed(self.output.splitlines()) if line.startswith("FAIL")), None)


def script_of(folder: Path) -> Path | None:
    return next((folder / name for name in SCRIPTS if (folder / name).is_file()), None)


def standalone_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment minus PYTHONPATH entries from which `import parity` would succeed."""
    env = dict(environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    kept = [p for p in paths if not (Path(p) / "parity" / "__init__.py").is_file()]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


def run_fresh(script: Path, timeout_s: float = VERIFY_TIMEOUT_S) -> Outcome:
    """Run the script as a user would: `python <script>` from its folder, in a process of its own."""
    try:
        done = subprocess.run([sys.executable, script.name], cwd=script.parent, env=standalone_env(os.environ),
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Outcome(None, out)
    return Outcome(done.returncode, done.stdout + done.stderr)


def _launch_raised(line: str) -> bool:
    return "raised" in line  # run_script: "FAIL: the kernel launch raised"; prelaunch: "... raised X"


def why_not(record: Mapping[str, Any], outcome: Outcome, timeout_s: float = VERIFY_TIMEOUT_S) -> str | None:
    """None when the outcome reproduces the record's failure, else what the fresh run did instead."""
    tail = " ".join(outcome.output.strip()[-OUTPUT_TAIL:].split())
    if outcome.returncode is None:
        return f"did not finish within {timeout_s:g} s"
    if outcome.returncode == 0:
        return (f"exits 0 (the failure does not come back from the recorded launches alone; it depends on "
                f"something the repro does not carry): {tail}")
    refused = [line for line in outcome.output.splitlines() if line.startswith("REFUSED")]
    if refused:
        return "refuses to run: " + " ".join(refused)[:OUTPUT_TAIL]
    fail = outcome.fail_line
    if outcome.returncode != 1 or fail is None:
        how = f"signal {-outcome.returncode}" if outcome.returncode < 0 else f"exit {outcome.returncode}"
        return f"crashes ({how}) instead of printing its FAIL line: {tail}"
    compile_failed = (record.get("compile") or {}).get("ok") is False
    if not compile_failed and record.get("status") == "failed" and _launch_raised(fail):
        return f"raises where the record has a wrong result: {tail}"
    if not compile_failed and record.get("status") == "error":
        if not _launch_raised(fail):
            return f"gives a wrong result where the record raised ({record.get('reason')}): {tail}"
        kind = raised_kind(record)
        if kind and kind not in outcome.output:
            return f"raises, but not the record's {kind}: {tail}"
    return None


def raised_kind(record: Mapping[str, Any]) -> str | None:
    """The exception class a run record's reason names ("triton.compiler.errors.CompilationError: ..." gives
    CompilationError), or None where the reason names none."""
    head = str(record.get("reason") or "").split(":", 1)[0].strip().rsplit(".", 1)[-1]
    return head if head.isidentifier() and head[0].isupper() else None


def finalize(record: dict[str, Any], results_dir: Path, written: Path | None = None,
             timeout_s: float = VERIFY_TIMEOUT_S) -> None:
    """Keep the folder the record names only if its script reproduces the record's failure; remove a
    folder at `written` that the record does not name. A folder with no script (a draft with the
    one-line command that shows a library's import failure) is kept as it is."""
    named = results_dir / record["repro"] if record.get("repro") else None
    if written is not None and written.is_dir() and (named is None or written.resolve() != named.resolve()):
        shutil.rmtree(written, ignore_errors=True)  # half written: no record would link it
    if named is None or not named.is_dir():
        return
    script = script_of(named)
    if script is None:
        return
    reason = why_not(record, run_fresh(script, timeout_s), timeout_s)
    if reason is None:
        return
    shutil.rmtree(named, ignore_errors=True)
    record["repro"] = None
    record["repro_error"] = (f"repro dropped: {script.relative_to(named).as_posix()} run standalone (fresh "
                             f"process, no parity) {reason}")[:1000]
