"""parity's map of a library against the library's own Ascend ports (issue 51): printed, never asserted.

data/npu-published/library-ascend-ports.json lists, per library, the ops whose authors ship a separate Triton
kernel for Ascend (or turn the generic one off there). That is no pass/fail verdict (a port may be for speed), so
this prints a cross-tab, not an agreement figure: of the ops parity says do not build / are wrong / port on Ascend,
how many the library's authors ported. If parity's failures carry information about the real NPU, the ported share
is higher among parity's failing ops than among its ports.

    python -m parity map B R-compile R-lowered --tests T > MAP.md
    python bench/npu_vendor_overlap.py --library flag_gems MAP.md
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "npu-published" / "library-ascend-ports.json"
VERDICTS = ("does not build on Ascend", "wrong on Ascend", "needs a newer triton-ascend", "ports", "not checked")


def norm(op: str) -> str:
    """test_group_norm, groupnorm, group_norm -> groupnorm (test files and port modules spell ops differently)."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"^te?st_", "", op.lower()))


def map_ops(text: str) -> dict[str, str]:
    """Per op of a `parity map` table, its worst kernel's verdict."""
    worst: dict[str, str] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.startswith("|") or cells[0] in ("op", "") or set(cells[0]) <= {"-", ":"}:
            continue
        verdict = next((v for v in VERDICTS if cells[2].startswith(v)), None)
        if verdict is None:
            continue
        op = norm(cells[0])
        if op not in worst or VERDICTS.index(verdict) < VERDICTS.index(worst[op]):
            worst[op] = verdict
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("map", type=Path, help="the markdown `parity map` printed")
    parser.add_argument("--library", required=True, help="flag_gems, liger or fla (the data file's library key)")
    args = parser.parse_args()
    doc = json.loads(DATA.read_text(encoding="utf-8"))
    ported = {norm(e["test"].split(":", 1)[1]): e["reason_kind"] for e in doc["entries"]
              if e["library"] == args.library}
    ops = map_ops(args.map.read_text(encoding="utf-8"))
    print(f"## {args.library}: parity's map ({len(ops)} ops) against the library's Ascend ports "
          f"({len(ported)} modules; {sum(1 for o in ported if o in ops)} of them match an op of the map by name)\n")
    print("| parity's verdict | ops | of them ported (or turned off) on Ascend by the library | share |")
    print("|---|---|---|---|")
    for verdict in VERDICTS:
        mine = [o for o, v in ops.items() if v == verdict]
        hit = [o for o in mine if o in ported]
        share = f"{100 * len(hit) / len(mine):.0f} %" if mine else "-"
        print(f"| {verdict} | {len(mine)} | {len(hit)} | {share} |")
    kinds = Counter(ported[o] for o in ops if o in ported)
    print(f"\nMatched ports by kind: {dict(kinds)}. Ports with no op of that name in the map: "
          f"{', '.join(sorted(o for o in ported if o not in ops)) or 'none'}.")


if __name__ == "__main__":
    main()
