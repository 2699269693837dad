"""Results I/O: one JSON object per line, one file per xdist worker, merged at the end."""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from enum import Enum
from pathlib import Path
from typing import Any, TextIO, cast

from parity.results.dirs import RESULTS, ResultsDir
from parity.results.kinds import Status
from parity.results.owner import Owner
from parity.results.record import SCHEMA, Record, record_problem

MERGED_NAME = RESULTS  # the merged records' name (parity.results.dirs owns every name in a results dir)


class SchemaError(RuntimeError):
    """A results file was written by an incompatible version of parity."""


def plain(value: Any) -> Any:
    """JSON has no inf/nan; store them as strings so the file stays standard JSON. The typed values a stage
    puts in a record (an enum, a frozen dataclass with `as_json`, such as parity.triage.owner.Owner) are
    serialised here, at the results edge."""
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "as_json") and not isinstance(value, type):
        return plain(value.as_json())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


FSYNC_EVERY_S = 1.0


class ResultWriter:
    """Appends records to this worker's part file.

    Each record is flushed to the OS before the next case starts, so a process that dies
    (segfault, abort, os._exit) loses nothing. fsync, which only matters if the machine
    itself goes down, runs at most once a second: per record it cost more than a small case.
    """

    def __init__(self, results_dir: Path, worker: str) -> None:
        results_dir.mkdir(parents=True, exist_ok=True)
        self.path = ResultsDir(results_dir).part(worker)
        self._fh: TextIO = self.path.open("a", encoding="utf-8")
        self._synced = 0.0

    def write(self, record: Record) -> None:
        self._fh.write(json.dumps(plain(record), sort_keys=False) + "\n")
        self._fh.flush()
        now = time.monotonic()
        if now - self._synced >= FSYNC_EVERY_S:
            os.fsync(self._fh.fileno())
            self._synced = now

    def close(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()


def parse_line(raw: bytes, is_last: bool) -> tuple[Record | None, str | None]:
    """One results line: (record, None), or (None, why it was skipped)."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except json.JSONDecodeError as exc:
        # only a cut-off last line is the trace of an interrupted writer; one in the middle is damage
        why = "the run that wrote it was probably interrupted" if is_last else "the file is corrupt here"
        return None, f"not valid JSON ({exc.msg}); {why}"
    if isinstance(record, dict) and record.get("schema", SCHEMA) != SCHEMA:
        return cast(Record, record), None  # another parity version wrote it: read_records says so for the whole file
    problem = record_problem(record)
    if problem:
        return None, problem
    try:
        return typed(record), None
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"its owner is not an owner object ({type(exc).__name__}: {exc})"


def typed(data: dict[str, Any]) -> Record:
    """A results line as the record the engine holds in memory: its status a `Status`, its owner an `Owner`
    (the one place JSON becomes typed values; `plain` is the way back)."""
    data["status"] = Status(data["status"])
    if isinstance(data.get("owner"), Mapping):
        data["owner"] = Owner.from_json(data["owner"])
    return cast(Record, data)  # its keys were checked by record_problem


def read_records(path: Path) -> Iterator[Record]:
    """Records of one file; a truncated, corrupt or malformed line is skipped with a warning naming it."""
    lines = path.read_bytes().splitlines()
    last = max((i for i, raw in enumerate(lines, 1) if raw.strip()), default=0)
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        record, why = parse_line(raw, lineno == last)
        if record is None:
            warnings.warn(f"{path}:{lineno}: skipped a results line: {why}", stacklevel=2)
            continue
        if record["schema"] != SCHEMA:
            raise SchemaError(f"{path}:{lineno}: results schema {record['schema']!r}, this parity reads "
                              f"schema {SCHEMA}; re-run the tier with this version to regenerate it")
        yield record


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so readers never see half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def merge_parts(results_dir: Path) -> list[Record]:
    """Merge every worker part into results.jsonl (atomically) and return the records."""
    parts = ResultsDir(results_dir).parts()
    records: list[Record] = []
    for part in parts:
        records.extend(read_records(part))
    records.sort(key=lambda r: (r["kernel"], r["case"], r.get("suite") or ""))
    write_results(results_dir, records)
    for part in parts:
        part.unlink()
    return records


def write_results(results_dir: Path, records: Iterable[Record]) -> None:
    """results.jsonl, replaced atomically."""
    atomic_write_text(ResultsDir(results_dir).results, "".join(json.dumps(plain(r)) + "\n" for r in records))


def load_results(results_dir: Path) -> list[Record]:
    """The merged records of one results dir, with unmerged parts (from a crash) included."""
    where = ResultsDir(results_dir)
    files = [where.results] if where.results.exists() else []
    files += where.parts()
    if not files:
        raise FileNotFoundError(f"{results_dir}: no {MERGED_NAME} here; run a tier first "
                                "(e.g. `nox -s interpret`) or pass the directory it wrote")
    records: list[Record] = []
    for f in files:
        records.extend(read_records(f))
    return records


def lenient_records(path: Path) -> list[Record]:
    """Every JSON object of one results file where the file may be damaged, partial or another parity's: a line
    that does not parse is skipped without a word, one that is a full record is typed, any other object is kept as
    it is (what a run's time estimate reads: only its kernel and timing matter)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found: list[Record] = []
    for line in lines:
        record, _ = parse_line(line.encode("utf-8"), False)
        if record is not None:
            found.append(record)
            continue
        try:  # no full record: a partial object still says its kernel and timing
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            found.append(cast(Record, data))
    return found


def retire_record(part: Path, kernel: str, case: str, suite: str | None) -> Record | None:
    """Remove the record of (kernel, case, suite) that a now dead worker wrote to its part file, and return it.

    The worker flushed it before it died (a comparison that passed, then a corrupted heap that killed the
    process): the death overrules it, so the controller's `crashed` record replaces it. Only a dead worker's
    part is rewritten: no one writes to it any more; a line that is no record is kept as it was."""
    if not part.exists():
        return None
    kept, found = [], None
    for line in part.read_text(encoding="utf-8").splitlines():
        record = parse_line(line.encode("utf-8"), False)[0] if found is None else None
        if record is not None and (record["kernel"], record["case"]) == (kernel, case) \
                and record.get("suite") in (suite, None):
            found = record
            continue
        kept.append(line)
    if found is not None:
        part.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    return found
