"""A results dir's layout: every file name in it, owned here (the writers and readers ask `ResultsDir`).

    results.jsonl          the run's records, merged (results-<worker>.jsonl: one part per worker meanwhile)
    env.json, REPORT.md    the environment and the report of the run that wrote the records
    repros/, outputs/      the repro folders and the stored outputs the records name
    crash-stacks/          a dead worker's thread stacks (parity.run.crash_log)
    .running/              the staging dir a run writes into until it ends (parity.run.rundir)
    previous/, unfinished/ the results a run replaced: a complete run's, or an interrupted run's
    envelope.jsonl         `parity envelope --results-dir DIR`'s rows (its own command's, so a run leaves it alone)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RESULTS = "results.jsonl"
PART_GLOB = "results-*.jsonl"
ENV = "env.json"
REPORT = "REPORT.md"
REPROS = "repros"
OUTPUTS = "outputs"
CRASH_STACKS = "crash-stacks"
STAGING = ".running"
PREVIOUS = "previous"
UNFINISHED = "unfinished"
ENVELOPE = "envelope.jsonl"
# what a finished run owns in its results dir; everything else there (user files) is left alone
RUN_FILES = (RESULTS, ENV, REPORT, REPROS, OUTPUTS, CRASH_STACKS)


@dataclass(frozen=True)
class ResultsDir:
    """One results dir (reports/<tier>/, or its staging dir) and the paths of what a run writes in it."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    @property
    def results(self) -> Path:
        return self.path / RESULTS

    def part(self, worker: str) -> Path:
        """One xdist worker's records while the run goes on ("main" without xdist)."""
        return self.path / f"results-{worker}.jsonl"

    def parts(self) -> list[Path]:
        return sorted(self.path.glob(PART_GLOB))

    @property
    def env(self) -> Path:
        return self.path / ENV

    @property
    def report(self) -> Path:
        return self.path / REPORT

    @property
    def repros(self) -> Path:
        return self.path / REPROS

    @property
    def outputs(self) -> Path:
        return self.path / OUTPUTS

    @property
    def crash_stacks(self) -> Path:
        return self.path / CRASH_STACKS

    @property
    def envelope(self) -> Path:
        return self.path / ENVELOPE

    @property
    def staging(self) -> ResultsDir:
        return ResultsDir(self.path / STAGING)

    @property
    def previous(self) -> ResultsDir:
        return ResultsDir(self.path / PREVIOUS)

    @property
    def unfinished(self) -> ResultsDir:
        return ResultsDir(self.path / UNFINISHED)

    @property
    def final(self) -> ResultsDir:
        """The results dir a staging dir belongs to (itself for a results dir)."""
        return ResultsDir(self.path.parent) if self.path.name == STAGING else self

    def run_files(self) -> list[Path]:
        return [self.path / name for name in RUN_FILES]
