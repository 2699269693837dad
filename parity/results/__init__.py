"""The results: the typed record (the one place a key is added), its files, and the outputs kept beside them."""

from parity.results.dirs import PART_GLOB, ResultsDir
from parity.results.files import (
    MERGED_NAME,
    ResultWriter,
    SchemaError,
    atomic_write_text,
    load_results,
    merge_parts,
    parse_line,
    read_records,
    write_results,
)
from parity.results.kinds import OwnerKind, Status
from parity.results.owner import Owner
from parity.results.record import (
    MODES,
    REQUIRED_KEYS,
    SCHEMA,
    STATUSES,
    Fit,
    KnownDivergence,
    Record,
    TriageEvidence,
    Where,
    empty_record,
    record_problem,
)

__all__ = [
    "MERGED_NAME",
    "MODES",
    "PART_GLOB",
    "REQUIRED_KEYS",
    "SCHEMA",
    "STATUSES",
    "Fit",
    "KnownDivergence",
    "Owner",
    "OwnerKind",
    "Record",
    "ResultWriter",
    "ResultsDir",
    "SchemaError",
    "Status",
    "TriageEvidence",
    "Where",
    "atomic_write_text",
    "empty_record",
    "load_results",
    "merge_parts",
    "parse_line",
    "read_records",
    "record_problem",
    "write_results",
]
