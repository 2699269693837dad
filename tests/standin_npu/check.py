"""`python -m tests.standin_npu.check DIR`: what `nox -s ascend-standin` must have produced in DIR, or exit 1 naming
what is missing. A session that ran nothing, timed nothing or probed nothing is not a pass."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any


def problems(results_dir: Path) -> list[str]:
    """What is wrong with one stand-in run's results dir (empty: it exercised every part it should)."""
    path = results_dir / "results.jsonl"
    if not path.exists():
        return [f"{path} is missing: the ascend tier recorded nothing"]
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    accuracy = [r for r in records if r.get("suite") == "accuracy"]
    perf = [r for r in records if r.get("suite") == "perf"]
    found = []
    if not accuracy:
        found.append("no accuracy records")
    bad = [f"{r['kernel']}[{r['case']}]: {r['status']} {str(r.get('reason'))[:200]}" for r in accuracy
           if r["status"] not in ("passed", "skipped", "xfailed")]
    found += [f"accuracy case did not pass on the stand-in: {b}" for b in bad]
    if any(r.get("backend") != "ascend" for r in records):
        found.append("a record is not from the ascend backend")
    timed = [r for r in perf if _finite((r.get("perf") or {}).get("ms"))]
    if not timed:
        found.append(f"the perf pass timed nothing ({len(perf)} perf records)")
    found += [f"perf {r['kernel']}[{r['case']}]: no time ({(r.get('perf') or {}).get('error')})" for r in perf
              if r not in timed]
    env = _json(results_dir / "env.json")
    want = {"torch_npu": "+standin", "device_name": "stand-in", "target_arch": "Ascend910B3"}
    for key, part in want.items():
        if part not in str(_find(env, key)):
            found.append(f"env.json {key}={_find(env, key)!r}: expected it to contain {part!r}")
    report = results_dir / "REPORT.md"
    if not report.exists() or not report.read_text().strip():
        found.append(f"{report} is missing or empty")
    return found


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def _find(data: Any, key: str) -> Any:
    """The first value under `key` anywhere in a nested env.json."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        for value in data.values():
            found = _find(value, key)
            if found is not None:
                return found
    return None


def main(argv: list[str]) -> int:
    results_dir = Path(argv[1] if len(argv) > 1 else "reports/ascend-standin")
    found = problems(results_dir)
    for line in found:
        print(f"ascend-standin: {line}", file=sys.stderr)
    if not found:
        print(f"ascend-standin: {results_dir} holds accuracy and perf records, env.json and REPORT.md")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
