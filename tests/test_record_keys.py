"""Every key the engine writes into a results record is declared in parity.results.Record, and the docs list them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from parity.results.record import Record, Timing

ROOT = Path(__file__).resolve().parents[1]
ENGINE = (ROOT / "parity", ROOT / "suites")
# the names a results record goes by in the engine; a compile tier's compile dict is `compiled`
RECORD_NAMES = {"record", "rec", "r"}


def _timing_alias(node: ast.AST) -> bool:
    """`record["timing"]` or `record.setdefault("timing", ...)`: a value that is the record's timing dict."""
    if isinstance(node, ast.Subscript):
        return (isinstance(node.value, ast.Name) and node.value.id in RECORD_NAMES
                and isinstance(node.slice, ast.Constant) and node.slice.value == "timing")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "setdefault"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in RECORD_NAMES
            and bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "timing")


def _store_key(target: ast.AST, timing_names: set[str]) -> str | None:
    """The key a subscript store writes: "owner" for record["owner"] = ..., "timing.run_s" for a timing key."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)):
        return None
    key, value = target.slice.value, target.value
    if isinstance(value, ast.Name) and value.id in RECORD_NAMES:
        return key
    if _timing_alias(value) or (isinstance(value, ast.Name) and value.id in timing_names):
        return f"timing.{key}"
    return None


def written_keys(source: str) -> dict[str, list[int]]:
    """Record keys a module writes -> the lines: subscript stores, update(k=...), setdefault("k"), and the keys
    of a dict literal that spreads a record ({**r, "k": ...})."""
    tree = ast.parse(source)
    timing_names = {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and _timing_alias(node.value)
                    for t in node.targets if isinstance(t, ast.Name)}
    found: dict[str, list[int]] = {}

    def add(key: str | None, line: int) -> None:
        if key is not None:
            found.setdefault(key, []).append(line)

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]:
                add(_store_key(target, timing_names), node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and isinstance(node.func.value, ast.Name) and node.func.value.id in RECORD_NAMES):
            if node.func.attr == "update":
                for kw in node.keywords:
                    add(kw.arg, node.lineno)
                for arg in node.args:
                    if isinstance(arg, ast.Dict):
                        for k in arg.keys:
                            add(k.value if isinstance(k, ast.Constant) else None, node.lineno)
            elif node.func.attr == "setdefault" and node.args and isinstance(node.args[0], ast.Constant):
                add(node.args[0].value, node.lineno)
        elif isinstance(node, ast.Dict) and any(k is None and isinstance(v, ast.Name) and v.id in RECORD_NAMES
                                                for k, v in zip(node.keys, node.values, strict=True)):
            for k in node.keys:
                add(k.value if isinstance(k, ast.Constant) else None, node.lineno)
    return found


def declared() -> set[str]:
    return set(Record.__annotations__) | {f"timing.{k}" for k in Timing.__annotations__}


def undeclared(source: str) -> dict[str, list[int]]:
    return {k: lines for k, lines in written_keys(source).items() if k not in declared()}


def engine_files() -> list[Path]:
    return [p for root in ENGINE for p in root.rglob("*.py") if "templates" not in p.parts]


def test_the_scan_catches_a_planted_undeclared_key():
    planted = ('def f(record, rec):\n    record["bogus_key"] = 1\n    rec.update(other_bogus=2)\n'
               '    timing = record.setdefault("timing", {})\n    timing["nap_s"] = 3\n'
               '    record["status"] = "passed"\n    return {**rec, "third_bogus": 1}\n')
    assert undeclared(planted) == {"bogus_key": [2], "other_bogus": [3], "timing.nap_s": [5], "third_bogus": [7]}


def test_every_key_the_engine_writes_is_declared_in_record():
    found: dict[str, list[str]] = {}
    for path in engine_files():
        for key, lines in written_keys(path.read_text()).items():
            found.setdefault(key, []).extend(f"{path.relative_to(ROOT)}:{line}" for line in lines)
    assert {"owner", "fit", "known_divergence", "status", "timing.run_s"} <= set(found), "the scan found too little"
    missing = {k: where for k, where in found.items() if k not in declared()}
    assert not missing, f"declare these keys in parity/results/record.py's Record (type and meaning): {missing}"


def documented_keys(text: str) -> set[str]:
    """The keys docs/reference.md's results-contract section names in backticks."""
    section = text.split("## Results contract", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `(\w+)`", section, re.MULTILINE))


def test_the_reference_lists_every_record_key():
    assert documented_keys("x\n## Results contract\n- `status` (str): ...\n## Layout\n- `other`\n") == {"status"}
    docs = documented_keys((ROOT / "docs" / "reference.md").read_text())
    keys = set(Record.__annotations__)
    assert docs == keys, (f"docs/reference.md's results contract and parity/results/record.py's Record differ: "
                          f"undocumented {sorted(keys - docs)}, not in Record {sorted(docs - keys)}; "
                          f"regenerate the list with `python -m parity.results`")
