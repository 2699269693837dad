"""parity's environment variables are declared once (parity.settings); Triton's are set only through the seam."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from dataclasses import replace
from pathlib import Path

import pytest

from parity import settings

ROOT = Path(__file__).resolve().parents[1]
PARITY = ROOT / "parity"
NAME = re.compile(r"\bPARITY_[A-Z0-9_]+\b")


def named_variables(source: str) -> set[str]:
    """PARITY_* names a module's strings and comments mention (identifiers such as a PARITY_ROOT constant are
    Python names, not variables)."""
    found: set[str] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            found |= set(NAME.findall(tok.string))
    names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}  # f"{PARITY_ROOT}" is code
    return found - names


def undeclared(paths: list[Path]) -> dict[str, set[str]]:
    """Per engine file, the PARITY_* names it mentions that are no declared variable (settings.py itself may
    also name the repository variables it lists)."""
    def known(p: Path) -> set[str]:
        return set(settings.BY_NAME) | (set(settings.REPOSITORY_VARIABLES) if p.name == "settings.py" else set())

    return {str(p.relative_to(ROOT)): names for p in paths if (names := named_variables(p.read_text()) - known(p))}


def test_every_parity_variable_the_engine_names_is_declared():
    planted = ('import os\nx = os.environ.get("PARITY_NO_SUCH_THING")  # PARITY_CACHE_DIR is declared\n'
               'PARITY_ROOT = 1\ny = f"{PARITY_ROOT}"\n')
    assert named_variables(planted) - set(settings.BY_NAME) == {"PARITY_NO_SUCH_THING"}, "a planted one is caught"
    assert undeclared(sorted(PARITY.rglob("*.py"))) == {}


def test_the_docs_and_the_readme_name_only_declared_variables():
    known = set(settings.BY_NAME) | set(settings.REPOSITORY_VARIABLES)
    for doc in (ROOT / "README.md", ROOT / "docs" / "reference.md", ROOT / "docs" / "running.md"):
        assert set(NAME.findall(doc.read_text())) - known == set(), doc.name
    assert {"PARITY_NO_SUCH"} - known == {"PARITY_NO_SUCH"}  # the control: an unknown name stays unknown


def docs_table(text: str) -> str:
    begin, end = "<!-- settings table: begin -->\n", "\n<!-- settings table: end -->"
    return text[text.index(begin) + len(begin):text.index(end)]


def test_the_reference_table_is_the_declarations():
    table = docs_table((ROOT / "docs" / "reference.md").read_text())
    assert table == settings.reference_table(), "regenerate it: settings.reference_table() (docs/reference.md)"
    stale = "\n".join(line for line in table.splitlines() if "PARITY_NO_PROOF" not in line)
    assert stale != settings.reference_table(), "a table missing a variable must differ (the control)"


def test_values_parse_by_type_and_a_bad_one_names_its_variable():
    s = settings.from_environ({"PARITY_FORK": "off", "PARITY_NO_FIT": "1", "PARITY_COMPILE_TIMEOUT_S": "12.5",
                               "PARITY_CACHE_DIR": "~/x"})
    assert (s.fork, s.no_fit, s.compile_timeout_s) == (False, True, 12.5)
    assert s.cache_dir == Path("~/x").expanduser() and settings.from_environ({}) == settings.Settings()
    assert settings.from_environ({"PARITY_FORK": "", "PARITY_NO_FIT": " "}) == settings.Settings()  # empty: unset
    with pytest.raises(ValueError, match="PARITY_CASE_TIMEOUT_S"):
        settings.from_environ({"PARITY_CASE_TIMEOUT_S": "ten"})


def test_an_option_reaches_a_child_through_child_env(monkeypatch):
    monkeypatch.setattr(settings, "_OPTIONS", {})
    monkeypatch.delenv("PARITY_NO_FIT", raising=False)
    assert "PARITY_NO_FIT" not in settings.child_env({}), "the control: no option, no variable"
    settings.configure(no_fit=True)
    assert settings.current().no_fit
    env = settings.child_env({"PATH": "/bin"})
    assert env["PARITY_NO_FIT"] == "1" and env["PATH"] == "/bin"
    assert settings.from_environ(env) == settings.current()
    back = settings.child_env({"PARITY_RECORD_KEEP": "5"}, replace(settings.Settings(), record_keep=2))
    assert "PARITY_RECORD_KEEP" not in back, "a setting back at its default must not inherit the base's value"
    with pytest.raises(TypeError, match="no setting"):
        settings.configure(no_such=True)


def test_a_changed_variable_is_read_again(monkeypatch):
    monkeypatch.setenv("PARITY_NO_PROOF", "1")
    assert settings.current().no_proof
    monkeypatch.setenv("PARITY_NO_PROOF", "0")
    assert not settings.current().no_proof


def triton_env_writes(source: str) -> list[int]:
    """Lines that set or unset a TRITON_* variable in this process's environment (os.environ's item assignment,
    del, pop, setdefault; os.putenv, os.unsetenv); a child's env dict is not the process's."""
    def triton(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and str(node.value).startswith("TRITON_")

    def environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
            (isinstance(node, ast.Name) and node.id in ("os", "environ"))

    lines = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else []
        lines += [node.lineno for t in targets if isinstance(t, ast.Subscript) and environ(t.value) and triton(t.slice)]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and environ(node.func.value)
                and node.func.attr in ("pop", "setdefault", "putenv", "unsetenv")
                and node.args and triton(node.args[0])):
            lines.append(node.lineno)
    return lines


def test_only_the_seam_sets_tritons_variables():
    planted = 'import os\nos.environ["TRITON_INTERPRET"] = "1"\nos.environ.pop("TRITON_HOME", None)\n' \
              'env = {"TRITON_INTERPRET": "1"}\nos.environ["PATH"] = "x"\nenv["TRITON_HOME"] = "y"\n'
    assert triton_env_writes(planted) == [2, 3], "the check must catch a planted write, and only that"
    found = {str(p.relative_to(PARITY)): lines for p in PARITY.rglob("*.py")
             if not {"seams", "templates"} & set(p.parts) and (lines := triton_env_writes(p.read_text()))}
    assert found == {}, f"set Triton's variables through parity.seams.env: {found}"


def test_the_seam_restores_what_it_set(monkeypatch):
    from parity.seams.env import set_triton_env, triton_env

    monkeypatch.setenv("TRITON_HOME", "/before")
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE", raising=False)
    with triton_env(TRITON_HOME="/during", TRITON_ALWAYS_COMPILE="1"):
        assert os.environ["TRITON_HOME"] == "/during" and os.environ["TRITON_ALWAYS_COMPILE"] == "1"
    assert os.environ["TRITON_HOME"] == "/before" and "TRITON_ALWAYS_COMPILE" not in os.environ
    with pytest.raises(ValueError, match=r"parity\.settings"):
        set_triton_env(PARITY_NO_FIT="1")
