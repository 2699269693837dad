"""Whether two results dirs hold the same verdicts, case for case: the check behind "behaviour unchanged".

    python bench/same_records.py BEFORE_DIR AFTER_DIR [--alias /old/root=/new/root ...]

Per case (kernel, case, suite): status, the reason's key line, compiles, the owner's who and name, whether
a repro was written, and err_ratio to three digits. `--alias` maps a path of the before run onto the after
run's (its checkout, its cache dir) before reasons are compared, and object addresses (0x7f...) are
ignored. Prints "N identical of M" and every difference; prints, never asserts.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.reasons import key_line
from parity.results import Owner, load_results

ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


def verdict(record: Mapping[str, Any], aliases: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """What must not change between two runs of the same suites on the same tier."""
    reason = str(record.get("reason") or "")
    for old, new in aliases:
        reason = reason.replace(old, new)
    reason = ADDRESS.sub("0x…", reason)  # an object's address differs from run to run
    owner = record.get("owner")
    owner = Owner.from_json(owner) if isinstance(owner, Mapping) else owner  # a record as JSON holds it
    err = (record.get("metrics") or {}).get("err_ratio")
    return {"status": record["status"], "reason": key_line(reason) if reason else "",
            "compiles": record.get("compiles"), "owner": (str(owner.who), owner.name) if owner else (None, None),
            "repro": bool(record.get("repro")),
            "err_ratio": f"{err:.3g}" if isinstance(err, float) else err}


def by_case(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], list[Mapping[str, Any]]]:
    """Records by (kernel, case, suite); a compile tier may write two compiles of one case under one id."""
    found: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        found.setdefault((r["kernel"], r["case"], r.get("suite") or ""), []).append(r)
    return found


def differences(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]],
                aliases: Sequence[tuple[str, str]] = ()) -> tuple[int, int, list[str]]:
    """(identical records, records in the larger run, one line per difference); records that share an id
    are compared as a set, whatever order the workers wrote them in."""
    a, b = by_case(before), by_case(after)
    lines, same = [], 0
    for key in sorted(set(a) | set(b)):
        va = sorted((verdict(r, aliases) for r in a.get(key, [])), key=repr)
        vb = sorted((verdict(r, ()) for r in b.get(key, [])), key=repr)
        if len(va) != len(vb):
            lines.append(f"{'/'.join(key)}: {len(va)} record(s) before, {len(vb)} after")
        for x, y in zip(va, vb, strict=False):  # a count that differs is reported above
            if x == y:
                same += 1
            else:
                lines.append(f"{'/'.join(key)}: " + "; ".join(f"{k} {x[k]!r} -> {y[k]!r}" for k in x if x[k] != y[k]))
    return same, max(len(before), len(after)), lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--alias", action="append", default=[], help="OLD=NEW: a path of the before run")
    args = parser.parse_args(argv)
    aliases = [tuple(a.split("=", 1)) for a in args.alias]
    same, total, lines = differences(load_results(args.before), load_results(args.after), aliases)  # type: ignore[arg-type]
    print(f"{args.after}: {same} identical of {total}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
