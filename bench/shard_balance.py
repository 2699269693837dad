"""How `--shard K/N` splits the default run's kernels: cases and kernels per shard, for each kind of tier.

    python bench/shard_balance.py [--shards 3] [--level quick] [--kernels NAMES]

The weight `--shard` balances is a kernel's case count at the level (parity.driver.shard): accuracy cases on the run
and interpreter tiers, compile cases (configs x signatures) on the compile tiers. Prints, per tier kind and
shard, the kernels and cases it gets and the largest shard over the mean (1.00 is a perfect split). Prints,
never asserts. Needs upstream triton (the shared kernels import it), e.g. the tests session's venv.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity.driver import shard
from parity.spec import LEVELS, SpecError, registry, validate_cases, validate_compile_cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--level", choices=LEVELS, default="quick")
    parser.add_argument("--kernels", default="")
    args = parser.parse_args()
    _, specs = registry.build(k.strip() for k in args.kernels.split(","))
    for kind, cases in (("run/interpret tiers", validate_cases), ("compile tiers", validate_compile_cases)):
        weights = {}
        for spec in specs:
            try:
                weights[spec.name] = 0 if kind.startswith("run") and spec.compile_only else len(cases(spec, args.level))
            except SpecError as exc:
                print(f"  {spec.name}: skipped ({exc})")
        shares = shard.assign(weights, args.shards)
        loads = [sum(weights[k] for k in share) for share in shares]
        mean = sum(loads) / len(loads)
        print(f"{kind}, level {args.level}: {len(weights)} kernels, {sum(loads)} cases over {args.shards} shards")
        for i, (share, load) in enumerate(zip(shares, loads, strict=True), 1):
            print(f"  shard {i}/{args.shards}: {load:5d} cases, {len(share):3d} kernels; heaviest: "
                  + ", ".join(f"{k} ({weights[k]})" for k in share[:3]))
        print(f"  largest shard / mean: {max(loads) / mean:.2f}" if mean else "  no cases")


if __name__ == "__main__":
    main()
