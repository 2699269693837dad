"""A crashed case's repro dir: AUTHOR.md with the out-of-bounds hint, and rerun.py, which runs the case again
in a fresh process.

A worker that died took the case's launch with it: there is no returned launch to capture, so no
standalone repro.py. What can be written is the case itself, re-run in a fresh process through this parity
checkout: `rerun.py` runs the one pytest item (no xdist) and exits 1 while the process still dies (it
names the signal) or while the case now fails in another way (on a CPU tier its red zones may catch the
stray write that used to kill the process), and 0 once it passes. It is not run at report time: the
record's `repro_note` says so.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from parity.repro.author import render_author
from parity.results import Record
from parity.results import dirs as rd
from parity.results.outputs_store import case_filename
from parity.run.unmasked import unmasked_accesses

RERUN = '''#!/usr/bin/env python3
"""Re-run `{nodeid}` on {backend} in a fresh process, through the parity checkout at {root}.

Exits 1 while the case crashes (or fails), 0 once it passes. Needs that checkout and the tier's environment
(the nox session's virtualenv: {python})."""

import json
import os
import signal
import subprocess
import sys
import tempfile

ROOT = {root!r}
ARGS = {args!r}

with tempfile.TemporaryDirectory() as out:
    done = subprocess.run([sys.executable, "-m", "pytest", *ARGS, f"--results-dir={{out}}"], cwd=ROOT, env={env})
    if done.returncode < 0:
        print(f"FAIL: the case crashed again: killed by {{signal.Signals(-done.returncode).name}}")
        sys.exit(1)
    path = os.path.join(out, "results.jsonl")
    records = [json.loads(line) for line in open(path)] if os.path.exists(path) else []
    record = next((r for r in records if r.get("suite") == "accuracy"), None)
    if record is None:
        print(f"FAIL: the case left no record (pytest exit {{done.returncode}}): the process died before it wrote one")
        sys.exit(1)
    if record["status"] != "passed":
        print(f"FAIL: the case is {{record['status']}} now: {{record.get('reason')}}")
        sys.exit(1)
    print("ok: the case passes in a fresh process")
'''


def unmasked_lines(kernels: Iterable[Any]) -> list[str]:
    return [line for k in kernels for op in ("load", "store") for line in unmasked_accesses(k, op)]


def write(record: Record, nodeid: str, *, kernels: Iterable[Any], backend: Any, results_dir: Path,
          kernels_option: str, seed: int, level: str, root: Path) -> Path:
    """Write AUTHOR.md and rerun.py for a crashed record; set its `repro`, `repro_note` and crash.unmasked."""
    record.setdefault("crash", {})["unmasked"] = unmasked_lines(kernels)
    out_dir = results_dir / rd.REPROS / case_filename(str(record["kernel"]), str(record["case"]))
    out_dir.mkdir(parents=True, exist_ok=True)
    args = [nodeid, f"--backend={backend.name}", f"--kernels={kernels_option}", f"--seed={seed}", f"--level={level}",
            "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "--no-perf"]
    env = "{**os.environ, 'TRITON_INTERPRET': '1'}" if backend.mode == "interpret" else "None"
    (out_dir / "rerun.py").write_text(RERUN.format(nodeid=nodeid, backend=backend.name, root=str(root), args=args,
                                                   env=env, python=sys.executable), encoding="utf-8")
    why = ("the process died while the kernel ran, on a tier where no compiler runs at that point; no tool is "
           "blamed on the strength of a crash")
    (out_dir / "AUTHOR.md").write_text(render_author(record, backend.name, why, "python rerun.py"), encoding="utf-8")
    record["repro"] = out_dir.relative_to(results_dir).as_posix()
    record["repro_note"] = ("a crashed launch returns nothing to capture, so there is no standalone repro.py: rerun.py "
                            "runs the case again through this parity checkout in a fresh process (not run here)")
    return out_dir


def attach(record: Record, nodeid: str, session: Any, *, root: Path) -> None:
    """The crash repro of an accuracy case whose spec the session has (`session`: the plugin's ParitySession);
    never raises: the record is what matters, its repro is a help (a raise goes to `repro_error`)."""
    spec = next((s for s in session.specs if s.name == record["kernel"]), None)
    if spec is None or record.get("suite") != "accuracy":
        return
    try:
        write(record, nodeid, kernels=spec.kernels, backend=session.backend, results_dir=session.results_dir,
              kernels_option=session.kernels_option, seed=session.seed, level=session.level, root=root)
    except Exception as exc:
        record["repro_error"] = f"crash repro: {type(exc).__name__}: {exc}"[:600]
