"""Imports inside functions between engine packages: each says why it must be lazy, or it is a counted debt.

An import in a function hides a dependency from the reader and from the floor test until that path runs. One
between two packages of parity/ is allowed where a comment on its line (or the line above) says why: a heavy
or optional third-party import behind it, a child process, a registration. The ones that predate this test
are counted per file in KNOWN; a file may lose them, never gain one.
"""

from __future__ import annotations

import ast
from pathlib import Path

PARITY = Path(__file__).resolve().parents[1] / "parity"


def package(module: str) -> str:
    """parity.report.findings -> report; parity.reasons -> reasons."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def unexplained_lazy_imports(source: str, module: str) -> list[int]:
    """Lines of imports inside a function that reach another parity package without a comment saying why."""
    lines = source.splitlines()
    found: set[int] = set()
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            if not any(t.startswith("parity.") and package(t) != package(module) for t in targets):
                continue
            here = lines[node.lineno - 1]
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            if "#" in here or above.startswith("#"):
                continue
            found.add(node.lineno)
    return sorted(found)


def engine_counts() -> dict[str, int]:
    counts = {}
    for path in PARITY.rglob("*.py"):
        if "templates" in path.parts:
            continue
        module = ".".join(path.relative_to(PARITY.parent).with_suffix("").parts)
        n = len(unexplained_lazy_imports(path.read_text(), module))
        if n:
            counts[str(path.relative_to(PARITY))] = n
    return counts


# the debt on 2026-12-03 (issue 40: 41 % of imports between engine modules were inside functions)
KNOWN: dict[str, int] = {
    "backends/ascend/compile.py": 11, "backends/ascend/cpu_build.py": 1, "backends/ascend/driver.py": 3,
    "backends/ascend/lowered.py": 1, "backends/ascend/lowered_device.py": 3, "backends/interpret.py": 1,
    "backends/interpret_gpu.py": 1, "cli/__init__.py": 4, "compile/counter.py": 2, "compile/fork.py": 1,
    "compile/keep_going.py": 2, "compile/once.py": 1, "compile/sandbox.py": 1, "compile/tools.py": 4,
    "compile/torch_device.py": 1, "errors.py": 1, "fit/hook.py": 2, "fit/probe.py": 4, "spec/library.py": 1,
    "options.py": 2, "plugin.py": 15, "record/capture.py": 6, "record/replay.py": 7, "record/summary.py": 1,
    "spec/registry.py": 2, "report/portability.py": 2, "repro/author.py": 1, "repro/capture.py": 5,
    "repro/compile_match.py": 1, "repro/compile_prelaunch.py": 1, "repro/compile_repro.py": 10, "repro/issue.py": 2,
    "repro/lowered_repro.py": 6, "repro/prelaunch.py": 3, "repro/run_repro.py": 6, "repro/sweep_repro.py": 5,
    "run/autotune_pin.py": 3, "run/faults.py": 1, "run/fit_proof.py": 4, "run/fit_proof_run.py": 7,
    "perf/pick_cache.py": 1, "run/redzone.py": 1, "run/sanitize.py": 6, "perf/warm.py": 7, "triage/limits.py": 1,
}


def test_the_check_finds_a_planted_lazy_import_and_passes_an_explained_one():
    planted = "def f():\n    from parity.report import findings\n    return findings\n"
    explained = "def f():\n    from parity.report import findings  # heavy: imports torch\n    return findings\n"
    above = "def f():\n    # a child process imports it afresh\n    import parity.report.findings\n"
    same = "def f():\n    from parity.run import compare\n"
    assert unexplained_lazy_imports(planted, "parity.run.x") == [2]
    assert unexplained_lazy_imports(explained, "parity.run.x") == []
    assert unexplained_lazy_imports(above, "parity.run.x") == []
    assert unexplained_lazy_imports(same, "parity.run.x") == []  # within one package: its own business


def test_no_file_gains_an_unexplained_lazy_import():
    grown = {f: n for f, n in engine_counts().items() if n > KNOWN.get(f, 0)}
    assert not grown, ("import at module level, or say on the import's line why it must be lazy (a heavy or "
                       f"optional dependency, a child process): {grown}")
