"""Where a worker's dying words go: faulthandler's thread stacks (a segfault in the interpreter or in a lowered
kernel prints ~40 lines of them) are written to crash-stacks/<worker>.log in the results dir, named in the crashed
record's `crash_stacks`, instead of the terminal."""

from __future__ import annotations

import faulthandler
import signal
from pathlib import Path
from typing import IO, Any

from parity.results import dirs as rd

STACKS_DIR = rd.CRASH_STACKS
# on it faulthandler writes every thread's stack to the file and the worker goes on: the controller's watchdog
# sends it before it kills a worker that overran its case (parity.run.watchdog)
DUMP_SIGNAL = signal.SIGUSR2


def stacks_path(results_dir: Path, worker: str) -> Path:
    return results_dir / STACKS_DIR / f"{worker}.log"


class StackFile:
    """A worker's pytest plugin: at session start (after pytest's own faulthandler set-up, which points it at the
    terminal) faulthandler writes to this worker's file instead."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: IO[str] | None = None

    def pytest_sessionstart(self, session: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file = open(self.path, "a", encoding="utf-8")  # open until the process dies
        faulthandler.enable(file=self.file, all_threads=True)
        faulthandler.register(DUMP_SIGNAL, file=self.file, all_threads=True)


def stacks_of(results_dir: Path, worker: str | None) -> str | None:
    """The dead worker's stack file, relative to the results dir, when it wrote one."""
    if not worker:
        return None
    path = stacks_path(results_dir, worker)
    return f"{STACKS_DIR}/{path.name}" if path.exists() and path.stat().st_size > 0 else None


def tidy(results_dir: Path) -> None:
    """Remove the files of workers that did not crash (empty), and the folder when none did."""
    folder = results_dir / STACKS_DIR
    if not folder.is_dir():
        return
    for path in folder.glob("*.log"):
        if path.stat().st_size == 0:
            path.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()


def no_workers_header(workers: int, mode: str) -> str | None:
    """pytest's header line for a run without xdist workers on a tier that launches in-process (run and interpret
    tiers; compile tiers fork each compile): a kernel that kills the process ends the whole run."""
    if workers or mode == "compile":
        return None
    return ("parity: no xdist workers (-n 0): a case whose kernel kills the process (SIGSEGV, SIGFPE, a device "
            "abort) ends the run there and leaves no record of that case; with -n 1 or more it is kept as a "
            "`crashed` record with its stacks")
