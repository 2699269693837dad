"""Keep a repro folder only when its script fails, in a fresh process, the way its record did.

A repro that exits 0 standalone (the failure lived outside the recorded launches: a launcher's
own step after the kernel, an environment variable of the run), or that crashes differently,
would send its reader a false bug. So, once a folder is written, its script runs once with
`sys.executable` in a new process, cwd the folder, with no parity on its path and a time limit.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from parity import settings
from parity.results import Record, Status

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


def standalone_env(environ: Mapping[str, str], search_path: Sequence[str] = ()) -> dict[str, str]:
    """The environment with PYTHONPATH set to its own entries and `search_path`'s (this process's
    sys.path: where a library a prelaunch repro calls was found), minus every entry from which
    `import parity` would succeed and those of the interpreter's own installation."""
    env = dict(environ)
    own = tuple(str(Path(p).resolve()) for p in {sys.prefix, sys.base_prefix})
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p] + [p for p in search_path if p]
    kept = [p for p in dict.fromkeys(paths) if not (Path(p) / "parity" / "__init__.py").is_file()
            and not str(Path(p).resolve()).startswith(own)]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


def module_roots() -> list[str]:
    """Where this process's top-level modules came from, including ones loaded by file path (a library
    a prelaunch repro calls): what a user's environment would put on the path."""
    roots = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if "." in name or not path:
            continue
        path = Path(path)
        roots.append(str(path.parent.parent if path.name == "__init__.py" else path.parent))
    return roots


def run_fresh(script: Path, timeout_s: float | None = None) -> Outcome:
    """Run the script as a user would: `python <script>` from its folder, in a process of its own."""
    timeout_s = settings.current().repro_verify_s if timeout_s is None else timeout_s
    env = standalone_env(settings.child_env(), [*sys.path, *module_roots()])
    try:
        done = subprocess.run([sys.executable, script.name], cwd=script.parent, env=env, capture_output=True,
                              text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return Outcome(None, out)
    return Outcome(done.returncode, done.stdout + done.stderr)


def _launch_raised(line: str) -> bool:
    return "raised" in line  # run_script: "FAIL: the kernel launch raised"; prelaunch: "... raised X"


def why_not(record: Record, outcome: Outcome, timeout_s: float | None = None) -> str | None:
    """None when the outcome reproduces the record's failure, else what the fresh run did instead."""
    timeout_s = settings.current().repro_verify_s if timeout_s is None else timeout_s
    tail = " ".join(outcome.output.strip()[-OUTPUT_TAIL:].split())
    if outcome.returncode is None:  # a hang reproduces a record that timed out, and nothing else
        hung = str(record.get("reason") or "").startswith("timeout")
        return None if hung else f"did not finish within {timeout_s:g} s (PARITY_REPRO_VERIFY_S sets the limit)"
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
    if not compile_failed and record.get("status") == Status.FAILED and _launch_raised(fail):
        return f"raises where the record has a wrong result: {tail}"
    if not compile_failed and record.get("status") == Status.ERROR:
        if not _launch_raised(fail):
            return f"gives a wrong result where the record raised ({record.get('reason')}): {tail}"
        kinds = raised_kinds(record)
        if kinds and not any(kind in outcome.output for kind in kinds):
            return f"raises, but not the record's {' / '.join(kinds)}: {tail}"
    return None


def raised_kinds(record: Record) -> list[str]:
    """The exception classes a run record's reason leads with: "triton.compiler.errors.CompilationError: ..."
    gives [CompilationError], a forked child's "ForkedCaseError: TypeError: ..." both; [] where it names none."""
    kinds = []
    for head in str(record.get("reason") or "").split(": ")[:4]:
        name = head.strip().rsplit(".", 1)[-1]
        if not (name.isidentifier() and name[0].isupper()):
            break
        kinds.append(name)
    return kinds


def finalize(record: Record, results_dir: Path, written: Path | None = None,
             timeout_s: float | None = None) -> None:
    """Keep the folder the record names only if its script reproduces the record's failure; remove a
    folder at `written` that the record does not name. A folder with no script (a draft with the
    one-line command that shows a library's import failure) is kept as it is."""
    repro = record.get("repro")
    named = results_dir / repro if repro else None
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
