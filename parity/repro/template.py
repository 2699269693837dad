"""Fill a repro script template: a real, linted .py file under templates/ whose marked lines say what goes there.

Two kinds of mark, so the template stays valid Python:
- `NAME = None  # @parity: field` becomes `NAME = <field's source text>`;
- a line holding only `# @parity: field` becomes the field's lines, verbatim (they carry their own indent).
`@title@` in the docstring becomes the title. Every mark needs a field and every field a mark.
"""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).parent / "templates"
MARK = re.compile(r"^(?P<lhs>\s*(?:\w+ = \S.*?|.*?= \S.*?))?\s*# @parity: (?P<field>\w+)$")


def template_path(name: str) -> Path:
    return TEMPLATES / f"{name}.py"


def marks(name: str) -> list[str]:
    """The fields a template asks for, in order."""
    return [m.group("field") for line in template_path(name).read_text().splitlines() if (m := MARK.match(line))]


def render(name: str, title: str, **fields: str) -> str:
    """The template's text with every mark replaced; a missing or unused field is an error."""
    wanted = marks(name)
    missing, unused = set(wanted) - set(fields), set(fields) - set(wanted)
    if missing or unused:
        raise KeyError(f"template {name}: fields missing {sorted(missing)}, unused {sorted(unused)}")
    out = []
    for line in template_path(name).read_text().splitlines():
        m = MARK.match(line)
        if m is None:
            out.append(line)
            continue
        value = fields[m.group("field")]
        lhs = m.group("lhs")
        if lhs is None:  # a block
            out.extend(value.splitlines())
        else:
            out.append(lhs.rsplit(" = ", 1)[0] + " = " + value)
    return "\n".join(out).replace("@title@", title) + "\n"
