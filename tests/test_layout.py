"""The engine's layout: stage packages with no import cycle, small modules, a one-line docstring per package."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from parity.repro import template

PARITY = Path(__file__).resolve().parents[1] / "parity"
MAX_MODULE_LINES = 420


def module_name(path: Path) -> str:
    parts = path.relative_to(PARITY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = PARITY) -> dict[str, set[str]]:
    """Module -> the parity modules it imports anywhere in its body (lazy imports count too)."""
    files = {module_name(p): p for p in root.rglob("*.py") if "templates" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in files and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that returns to its start, or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_cycle_finder_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_engine_has_no_import_cycle():
    graph = import_graph()
    assert "parity.report.backend_md" in graph and "parity.compile.counter" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_modules_stay_small():
    big = {module_name(p): n for p in PARITY.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not big, f"split these modules (over {MAX_MODULE_LINES} lines): {big}"


def test_every_package_says_what_its_stage_does():
    for init in PARITY.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text()))
        assert doc and doc.strip(), f"{init}: add a one-line docstring saying what this stage does"


@pytest.mark.parametrize("name", ["run_script", "cuda_compile_script", "ascend_compile_script", "prelaunch_script"])
def test_templates_fill_every_mark_and_refuse_strays(name):
    fields = {f: "None" for f in template.marks(name)}
    text = template.render(name, "t", **fields)
    ast.parse(text)
    assert "@parity:" not in text and "@title@" not in text
    with pytest.raises(KeyError, match="missing"):
        template.render(name, "t", **dict(list(fields.items())[1:]))
    with pytest.raises(KeyError, match="unused"):
        template.render(name, "t", **fields, stray="1")


def test_run_script_check_passes_and_fails_as_the_repro_would():
    """The generated repro's own comparison, imported from its template: a match passes, a tail error fails."""
    code = """
import torch
from parity.repro.templates import run_script as s
s.TOLERANCE = {"rtol": 1e-3, "atol": 1e-5, "max_err_ratio": None}
ref = torch.arange(8, dtype=torch.float64)
print("GOOD", s.check("out", ref.float(), ref, None))
bad = ref.clone(); bad[-2:] += 1
print("BAD", s.check("out", bad.float(), ref, None))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=PARITY.parent, env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "GOOD True" in proc.stdout and "BAD False" in proc.stdout
    assert "mismatches lie in dim0 6..7" in proc.stdout


def parity_imports(root: Path = PARITY) -> list[tuple[Path, int, str, str]]:
    """Every `from parity... import name` in the engine, lazy ones inside functions included."""
    found = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("parity"):
                found += [(path, node.lineno, node.module, a.name) for a in node.names]
    return found


def unresolved(imports: list[tuple[Path, int, str, str]]) -> list[str]:
    """The imports whose name is neither an attribute nor a submodule of the module they name."""
    import importlib

    bad = []
    for path, line, module, name in imports:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if (exc.name or "").startswith("parity"):
                bad.append(f"{path.name}:{line}: no module {module}")
            continue  # needs a package this environment lacks (triton-ascend, ...)
        if hasattr(mod, name):
            continue
        try:
            importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError:
            bad.append(f"{path.name}:{line}: {module} has no {name}")
    return bad


def test_lazy_imports_resolve_too():
    """Imports inside functions run only when that path runs; check them all here instead."""
    assert unresolved([(PARITY / "x.py", 1, "parity.run", "no_such_module")]), "the check must catch a bad import"
    assert unresolved(parity_imports()) == []


MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|home|Users|root)/[\w./-]+")


def machine_paths(text: str) -> list[str]:
    """Absolute paths of one machine's home or work dirs, as a skip reason or a default built from one."""
    return MACHINE_PATH.findall(text)


def test_no_test_names_a_path_of_the_machine_it_was_written_on():
    assert machine_paths('reason="needs the venv at /work/venvs/asc"') == ["/work/venvs/asc"]  # control
    assert machine_paths('ROOT / ".nox" / session / "bin/python"') == []
    found = {p.name: machine_paths(p.read_text()) for p in Path(__file__).parent.glob("*.py")
             if p.name != Path(__file__).name}
    assert {k: v for k, v in found.items() if v} == {}


THIRD_PARTY = ("triton", "torch")


def third_party_names(tree: ast.AST) -> set[str]:
    """Names a module binds to triton or torch objects by importing them (`import triton.compiler`, `from
    triton.runtime.jit import JITFunction`, `import torch`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in THIRD_PARTY}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in THIRD_PARTY:
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def third_party_patches(source: str) -> list[int]:
    """Lines that assign to, delete from or setattr() on an object imported from triton or torch."""
    tree = ast.parse(source)
    names = third_party_names(tree)
    lines = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr")
              and node.args and _root(node.args[0]) in names):
            lines.append(node.lineno)
        flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
        lines += [node.lineno for t in flat if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in names]
    return lines


# torch's interception points: a mode sees every torch call made inside it
TORCH_MODES = ("TorchFunctionMode", "TorchDispatchMode")


def torch_modes(source: str) -> list[int]:
    """Lines that subclass (or import) one of torch's modes: an interception that belongs in parity.seams."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            names = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", None) for b in node.bases}
            lines += [node.lineno] if names & set(TORCH_MODES) else []
        elif isinstance(node, ast.ImportFrom) and any(a.name in TORCH_MODES for a in node.names):
            lines.append(node.lineno)
    return lines


def engine_lines(check: Callable[[str], list[int]], outside: set[str]) -> dict[str, list[int]]:
    """Engine file (relative path) -> the lines `check` finds in it, for files outside the `outside` dirs."""
    return {str(p.relative_to(PARITY)): lines for p in PARITY.rglob("*.py")
            if not outside & set(p.parts) and (lines := check(p.read_text()))}


def test_only_the_seams_patch_triton_and_torch():
    planted = "import triton.compiler\nfrom triton.runtime.jit import JITFunction\n" \
              "triton.compiler.compile = f\nJITFunction.run = g\nsetattr(JITFunction, 'x', 1)\nx = triton.y\n"
    assert third_party_patches(planted) == [3, 4, 5], "the check must catch a planted patch"
    found = engine_lines(third_party_patches, outside={"seams", "templates"})
    assert found == {}, f"patch Triton and torch through parity.seams only: {found}"


def test_only_the_seams_intercept_torch_calls():
    planted = "import torch\nfrom torch.overrides import TorchFunctionMode\n" \
              "class M(torch.overrides.TorchFunctionMode):\n    pass\nclass N(dict):\n    pass\n"
    assert torch_modes(planted) == [2, 3], "the check must catch a planted mode"
    found = engine_lines(torch_modes, outside={"seams", "templates"})
    assert found == {}, f"intercept torch calls through parity.seams.torch_calls.intercepted only: {found}"


FACETS = {"mode", "target", "tracker", "type"}


def backend_name_tests(source: str) -> list[int]:
    """Lines that compare a value with a backend's name (`== "interpret"`, `in ("cuda", ...)`,
    `.startswith("ascend")`) instead of asking the backend what it declares (parity.backends.base)."""
    from parity.backends import BACKENDS

    def names(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in BACKENDS
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(names(e) for e in node.elts)

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr in FACETS:
            continue  # a declared facet (`backend.mode == "interpret"`, `.target == "ascend"`), or a device type
        if isinstance(node, ast.Compare) and any(names(c) for c in [node.left, *node.comparators]):
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith", "removesuffix", "removeprefix") and node.args
              and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).strip("-") in
              {part for name in BACKENDS for part in name.split("-")}):
            lines.append(node.lineno)
    return lines


def test_only_the_backends_compare_backend_names():
    planted = 'if backend == "interpret":\n    pass\nx = name.startswith("ascend")\ny = b in ("cuda", "ascend")\n' \
              'z = backend.mode == "interpret"\n'
    assert backend_name_tests(planted) == [1, 3, 4], "the check must catch a planted comparison"
    found = engine_lines(backend_name_tests, outside={"backends", "seams", "templates"})
    assert found == {}, f"ask the backend's facets (parity.backends.base.Backend) instead: {found}"


def library_mentions(source: str, words: set[str]) -> list[int]:
    """Lines whose code (names and string literals, not comments, docstrings or links) names one of `words`."""
    import io
    import tokenize

    tree = ast.parse(source)
    docstrings = {node.body[0].value.lineno for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    lines = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.NAME, tokenize.STRING) and tok.start[0] not in docstrings:
            text = re.sub(r"https?://\S+", "", tok.string.lower())  # a cited public source may name its project
            if set(re.findall(r"[A-Za-z_][\w-]*", text)) & words:
                lines.append(tok.start[0])
    return lines


def test_the_engine_names_no_library():
    from libraries.adapters import ADAPTERS

    words = {w.lower() for a in ADAPTERS for w in (*a.packages, a.dist, a.name.split()[0])}
    assert library_mentions('import flag_gems\nx = "# FlagGems"\n', words) == [1, 2], "the check must catch a name"
    found = engine_lines(lambda text: library_mentions(text, words), outside={"templates"})
    assert found == {}, f"ask the library's adapter (parity.spec.library) instead of naming it: {found}"


# The floors, lowest first: a package imports only from its own floor and the ones below it. results (the typed
# record and its files) sits just above spec: every stage that judges a case writes a record. triage decides
# the owner from the evidence it is handed, below the report and the repros that only read it. findings (the
# types a failing record's Finding is made of, its tracker's among them, and the markdown every draft and report
# renders it with) sits low, so drafts never borrow the report's helpers; the pipeline names a case's phases over
# all of them.
FLOORS = ("spec", "results", "seams", "compile", "findings", "fit", "backends", "run", "perf", "triage", "report",
          "repro", "driver", "plugin")
# root modules and packages that share a floor (other root modules, cases, settings, ..., are the spec
# floor): record captures launches as repros do. The fit advisor sits below the backends that call it: it
# compiles through the driver object it is handed, never by importing a backend. The shared known divergences
# ask the backends which tiers build with triton-ascend
ROOT_FLOOR = {"plugin": "plugin", "options": "plugin", "cli": "plugin", "__main__": "plugin",
              "record": "repro", "envelope": "repro",
              "known": "backends"}
# upward imports the engine still has, each a debt with its why (a lower floor that needs an upper one takes a
# registration, as parity.spec.context.register_facets); a new one fails. The public facade names parity.known for
# type checkers only (at run time it resolves on first use, PEP 562): specs import it, the engine never does
KNOWN_UPWARD: set[tuple[str, str]] = {("parity", "parity.known")}


def floor(module: str) -> int:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    return FLOORS.index(name if name in FLOORS else ROOT_FLOOR.get(name, "spec"))


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(a, b) for a, targets in graph.items() for b in targets if floor(b) > floor(a)}


def test_packages_import_only_downward():
    planted = {"parity.compile.counter": {"parity.report.envinfo"}, "parity.report.envinfo": set()}
    assert upward_imports(planted) == {("parity.compile.counter", "parity.report.envinfo")}, "a planted one is caught"
    new = upward_imports(import_graph()) - KNOWN_UPWARD
    assert not new, f"import from your own floor or below ({' < '.join(FLOORS)}): {sorted(new)}"


# Tier identity lives on each tier's Backend class (parity.backends): a table elsewhere keyed by tier names (a dict
# with two or more of them as keys, a tuple/list/set of two or more) is a fact a new tier would have to be added to
def tier_tables(source: str, tiers: set[str]) -> list[int]:
    """Line numbers of literal tables keyed by (or listing) two or more tier names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            names = [k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in tiers]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in tiers]
        else:
            continue
        if len(names) >= 2:
            found.append(node.lineno)
    return found


def test_tier_table_finder_catches_a_planted_table_and_passes_its_clean_twin():
    tiers = {"cuda", "cuda-compile", "interpret"}
    assert tier_tables('ORDER = ("cuda", "interpret")\nCHECKS = {"cuda": 1, "cuda-compile": 2}\n', tiers) == [1, 2]
    assert tier_tables('ORDER = ("run", "compile")\nENV = {"python": 1, "interpret": True}\n', tiers) == []


def test_no_engine_file_outside_backends_holds_a_table_keyed_by_tier_name():
    from parity.backends import BACKENDS

    tiers = set(BACKENDS)
    found = {str(p.relative_to(PARITY)): lines for p in PARITY.rglob("*.py")
             if "templates" not in p.parts and p.relative_to(PARITY).parts[0] != "backends"
             and (lines := tier_tables(p.read_text(), tiers))}
    assert not found, f"ask the tier's Backend class (parity.backends) instead of a table of tier names: {found}"
