"""A smaller bundle for CPU replay: one kept launch per kernel, ops first (issue 51).

The replay of a whole library's bundle on the Ascend tiers costs seconds per launch (ascend-compile: a bishengir
compile each); on a shared 2-core machine that is hours. This writes a bundle with each kernel's first kept launch,
in one manifest whose order puts the first kernel of every recording process (one process per test file: one op)
before the rest, so a replay cut short has covered the most ops. Tensors are hard-linked, sources copied.

    python bench/bundle_sample.py BUNDLE OUT
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path


def main(src: Path, out: Path) -> int:
    out.mkdir(parents=True)
    (out / "tensors").mkdir()
    shutil.copytree(src / "sources", out / "sources")
    shutil.copy(src / "bundle.json", out / "bundle.json")
    processes, firsts, rest, seen = [], [], [], set()
    for manifest in sorted(src.glob("manifest-*.jsonl")):
        lines = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
        processes += [e for e in lines if e.get("type") == "process"]
        mine = []
        for e in lines:
            if e.get("type") == "launch" and e["kernel"]["id"] not in seen:
                seen.add(e["kernel"]["id"])
                mine.append(e)
        if mine:
            firsts.append(mine[0])
            rest += mine[1:]
    kept = firsts + rest
    for e in kept:
        name = Path(e["tensors"]).name if "tensors" in e else f"{e['id']}.safetensors"
        os.link(src / "tensors" / name, out / "tensors" / name)
    with open(out / "manifest-0.jsonl", "w", encoding="utf-8") as fh:
        for e in processes + kept:
            fh.write(json.dumps(e, sort_keys=True) + "\n")
    print(f"{len(kept)} launches ({len(firsts)} processes' first kernels first) of {len(seen)} kernels -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
