"""What triage reads in a kernel's source beyond a limit's regex, kept on the failing record (`source_facts`)
so that the report's re-triage, which has the records but no source, reads the same facts.

- `spin_lock`: the lines of `while` loops that spin on tl.atomic_cas / tl.atomic_xchg (a lock, a flag another
  program sets): such a kernel waits on other programs;
- `random`: the tl.rand / tl.randn / tl.randint / tl.randint4x calls: its values come from a seeded random
  stream, which each compiler may generate differently;
- `reductions`: the calls that add many terms into one (tl.sum, tl.dot, tl.atomic_add, tl.cumsum, tl.reduce, ...):
  two correct compilers may round them differently (summation order). tl.max / tl.min are exact and not listed.
"""

from __future__ import annotations

import ast
import re
import textwrap

from parity.results import Record

SPIN_OPS = ("atomic_cas", "atomic_xchg")
RANDOM_OPS = ("rand", "randn", "randint", "randint4x")
_RANDOM_CALL = re.compile(r"\b(?:tl|language)\.(randint4x|randint|randn|rand)\s*\(")
_REDUCTION_CALL = re.compile(r"\b(?:tl|language)\.(sum|dot|dot_scaled|atomic_add|cumsum|cumprod|reduce|"
                             r"associative_scan)\s*\(|\.(sum|cumsum)\s*\(\s*(?:axis|\d)")
_SPIN_LINE = re.compile(r"^\s*while\b.*\b(?:atomic_cas|atomic_xchg)\s*\(")


def _trees(source: str) -> list[ast.AST]:
    """Each function of the source parsed alone (the kernel and its helpers are joined, each as indented as it
    was); one that does not parse is left to the line patterns."""
    chunks = re.split(r"\n(?=\s*@|\s*def )", source)
    trees: list[ast.AST] = []
    for chunk in chunks:
        try:
            trees.append(ast.parse(textwrap.dedent(chunk)))
        except SyntaxError:
            continue
    return trees


def spin_lines(source: str) -> list[str]:
    """The `while` lines whose test or body calls tl.atomic_cas or tl.atomic_xchg."""
    found = []
    for tree in _trees(source):
        for node in ast.walk(tree):
            if isinstance(node, ast.While) and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in SPIN_OPS
                    for n in ast.walk(node)):
                found.append(ast.unparse(node.test)[:120])
    found += [line.strip()[:120] for line in source.splitlines() if _SPIN_LINE.search(line)]
    return list(dict.fromkeys(f"while {t}" if not t.startswith("while") else t.rstrip(":") for t in found))


def random_calls(source: str) -> list[str]:
    """tl.rand, tl.randn, tl.randint, tl.randint4x: those the source calls, each once."""
    return sorted({f"tl.{m.group(1)}" for m in _RANDOM_CALL.finditer(source)})


def reduction_calls(source: str) -> list[str]:
    """The reductions the source performs (tl.sum, tl.dot, tl.atomic_add, ... and `x.sum(axis)`), each once."""
    return sorted({f"tl.{m.group(1) or m.group(2)}" for m in _REDUCTION_CALL.finditer(source)})


def read(record: Record, source: str) -> dict[str, list[str]]:
    """The facts of this source; with none (the report's re-triage), those the record kept from its run."""
    if not source:
        return {k: list(v) for k, v in (record.get("source_facts") or {}).items()}
    facts = {"spin_lock": spin_lines(source), "random": random_calls(source), "reductions": reduction_calls(source)}
    return {k: v for k, v in facts.items() if v}


def note(record: Record, source: str) -> None:
    """Keep the facts on a failing record, for triage at report time."""
    facts = read(record, source) if source else {}
    if facts:
        record["source_facts"] = facts
