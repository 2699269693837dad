"""The record is typed end to end: statuses and owners are compared as `Status` and `OwnerKind` members, never as
raw words, outside parity.results (where JSON becomes those types), and a record read back carries them."""

from __future__ import annotations

import ast
from pathlib import Path

from parity.results import STATUSES, Owner, OwnerKind, Status, parse_line

ENGINE = Path(__file__).resolve().parents[1] / "parity"
# a word a status or an owner kind is written as; a comparison with one of these as a literal is a raw comparison
WORDS = frozenset(STATUSES) | {k.value for k in OwnerKind}


def _literals(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [w for elt in node.elts for w in _literals(elt)]
    return []


def raw_comparisons(source: str) -> list[str]:
    """Each comparison (==, !=, in, not in, ...) with a status or owner word as a literal operand: line and text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(w in WORDS for side in (node.left, *node.comparators)
                                                 for w in _literals(side)):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_counter_finds_a_planted_raw_comparison_and_passes_its_typed_twin():
    planted = "if record['status'] in ('failed', 'error') or owner['who'] == 'author':\n    pass\n"
    typed = "if record['status'] in (Status.FAILED, Status.ERROR) or owner.who is OwnerKind.AUTHOR:\n    pass\n"
    assert len(raw_comparisons(planted)) == 2 and raw_comparisons(typed) == []


def test_no_raw_status_or_owner_comparison_outside_results():
    found = [f"{path.relative_to(ENGINE.parent)}:{hit}" for path in sorted(ENGINE.rglob("*.py"))
             if "results" not in path.relative_to(ENGINE).parts[:1] and "templates" not in path.parts
             for hit in raw_comparisons(path.read_text(encoding="utf-8"))]
    assert not found, f"{len(found)} raw comparison(s); compare with Status/OwnerKind members:\n" + "\n".join(found)


def test_a_record_read_back_carries_its_status_and_owner_as_types():
    line = (b'{"schema": 1, "backend": "interpret", "mode": "interpret", "kernel": "k", "case": "c", "params": {},'
            b' "status": "failed", "reason": "x", "metrics": null, "tolerance": null, "compiles": null,'
            b' "compile": null, "perf": null, "repro": null,'
            b' "owner": {"who": "author", "name": "k", "evidence": "e", "provisional": false, "settle": null,'
            b' "limit": null, "also": []}}')
    record, why = parse_line(line, is_last=True)
    assert why is None and record is not None
    assert record["status"] is Status.FAILED
    assert isinstance(record["owner"], Owner) and record["owner"].who is OwnerKind.AUTHOR


def test_an_owner_of_an_unknown_kind_is_refused_with_the_word():
    line = (b'{"schema": 1, "backend": "interpret", "mode": "interpret", "kernel": "k", "case": "c", "params": {},'
            b' "status": "failed", "reason": "x", "metrics": null, "tolerance": null, "compiles": null,'
            b' "compile": null, "perf": null, "repro": null, "owner": {"who": "nobody", "name": "k", "evidence": "e"}}')
    record, why = parse_line(line, is_last=True)
    assert record is None and why is not None and "nobody" in why


def test_mypy_is_strict_with_no_per_module_override():
    config = (ENGINE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert "strict = true" in config and "[[tool.mypy.overrides]]" not in config
