"""A recorded kernel's axes: the dimensions that vary between its kept launches, and how each grows. Pure functions.

A launch is read as named integers, its "members": each tensor argument's shape, strides and offset (`q.1` is dim 1
of the tensor passed as `q`, `q.stride.0` its stride 0, `q.offset` its element offset in its buffer), each integer
argument by its parameter name (`T`, `BT`) and each grid dimension (`grid.0`). Members whose values rank the launches
the same way vary together: they are one axis, named by one of them (an integer argument first, then a shape
dimension, the smallest). Every other member is a function of that axis fitted to every recorded launch exactly:

- linear, `a·s + b` with integers a and b (a shape `T`, a stride `T·H·D`, an offset, an argument `T·H`);
- a ceiling, `c·cdiv(a·s, d)` (a grid `cdiv(T, 64)`, `B·H·cdiv(T, BT)`): d a power of two or an integer every launch
  passes (its block constexpr), below the largest recorded a·s (a larger block would make every recorded launch
  one block: the recording shows nothing of it), c dividing every recorded value.

A grid dimension that stayed constant while the axis varied is constant (a persistent grid) unless a ceiling fits
it too (T = 100 and 120 both give cdiv(T, 64) = 2); where two fits agree on every recorded launch but not at a size
the search tries, that size is "not checked" and says so. A member no fit explains makes its axis "not checked"; a
grid dimension no fit explains leaves the grid as recorded and the grid "not checked". Nothing is guessed: a kernel
whose launches never vary gets no axis, and `--grow q.1+T=..1M` names one (members joined by `+`, grown in
proportion to the first, with the outer strides of each named tensor dimension); its grid is then not checked.
"""

from __future__ import annotations

import ast
import copy
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import parity.envelope.axes as axes

GRID = "grid."
_MEMBER = re.compile(r"^[A-Za-z_]\w*(?:\.\d+)?$")
MAX_BLOCK_LOG2 = 20  # ceiling divisors tried: powers of two up to Triton's largest block


@dataclass(frozen=True)
class Model:
    """One member as a function of its axis' value s: `const` v; `linear` a·s + b; `ceil` c·cdiv(a·s, d);
    `pow2` next_power_of_2(a·s) (a block constexpr that follows the size: BLOCK = triton.next_power_of_2(N))."""

    kind: str
    a: int = 0
    b: int = 0
    c: int = 1
    d: int = 1

    def at(self, s: int) -> int:
        if self.kind == "const":
            return self.b
        if self.kind == "linear":
            return self.a * s + self.b
        if self.kind == "pow2":
            return 1 << max(self.a * s - 1, 0).bit_length()
        return self.c * -(-(self.a * s) // self.d)

    def text(self, axis: str) -> str:
        if self.kind == "const":
            return f"{self.b:,}"
        scaled = axis if self.a == 1 else f"{self.a:,}·{axis}"
        if self.kind == "linear":
            return scaled if not self.b else f"{scaled} {'+' if self.b > 0 else '-'} {abs(self.b):,}"
        if self.kind == "pow2":
            return f"next_power_of_2({scaled})"
        return ("" if self.c == 1 else f"{self.c:,}·") + f"cdiv({scaled}, {self.d:,})"


@dataclass
class ReplayAxis:
    """One axis of a recorded kernel: its name (a member), the launch it grows from, and every member's fits."""

    name: str
    low: int  # the base launch's value: the largest recorded along this axis
    high: int
    base: int  # index of the base launch among the kernel's kept launches
    fits: dict[str, list[Model]] = field(default_factory=dict)  # member -> every model that fits the recording
    grid_unknown: str | None = None  # why the grid's growth is not known (then it stays as recorded)
    blocked: str | None = None  # why this axis cannot be grown at all

    def values_at(self, s: int) -> tuple[dict[str, int], str | None]:
        """Every grown member's value at s, or why s is not checked (two fits that agreed on the recording differ)."""
        out = {}
        for member, models in self.fits.items():
            seen = {m.at(s) for m in models}
            if len(seen) > 1:
                texts = " and ".join(f"{member} = {m.text(self.name)}" for m in models[:2])
                return {}, (f"the recorded launches fit {texts}, which differ at {self.name} = {s:,}; record a "
                            "launch of another size to tell them apart")
            out[member] = seen.pop()
        return out, None

    def described(self) -> dict[str, str]:
        return {m: " or ".join(x.text(self.name) for x in models) for m, models in self.fits.items()}


def _literal_int(value: Mapping[str, Any]) -> int | None:
    if "literal" not in value:
        return None
    try:
        v = ast.literal_eval(value["literal"])
    except (ValueError, SyntaxError):
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def named_args(entry: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(parameter name, encoded value) of every argument, positional then keyword."""
    params = [p[0] for p in entry["kernel"].get("params") or []]
    positional = [(params[i] if i < len(params) else f"arg{i}", v) for i, v in enumerate(entry["args"])]
    return positional + list(entry["kwargs"].items())


def members(entry: Mapping[str, Any]) -> dict[str, int]:
    """The launch's named integers: shapes, strides and offsets of its tensors, integer arguments, grid dims."""
    out: dict[str, int] = {}
    for name, value in named_args(entry):
        if "tensor" in value:
            view = entry["views"][value["tensor"]]
            out.update({f"{name}.{i}": int(n) for i, n in enumerate(view["shape"])})
            out.update({f"{name}.stride.{i}": int(n) for i, n in enumerate(view["stride"])})
            out[f"{name}.offset"] = int(view["offset"])
        elif (v := _literal_int(value)) is not None:
            out[name] = v
    out.update({f"{GRID}{i}": int(g) for i, g in enumerate(entry["grid"])})
    return out


def grown_entry(entry: Mapping[str, Any], values: Mapping[str, int]) -> dict[str, Any]:
    """A copy of the launch with the members in `values` set: the inverse of `members`."""
    out = copy.deepcopy(dict(entry))
    for i, (name, value) in enumerate(named_args(out)):
        if "tensor" in value:
            view = out["views"][value["tensor"]]
            view["shape"] = [values.get(f"{name}.{d}", n) for d, n in enumerate(view["shape"])]
            view["stride"] = [values.get(f"{name}.stride.{d}", n) for d, n in enumerate(view["stride"])]
            view["offset"] = values.get(f"{name}.offset", view["offset"])
        elif name in values:
            slot = out["args"] if i < len(out["args"]) else out["kwargs"]
            key = i if i < len(out["args"]) else name
            slot[key] = {"literal": repr(values[name])}
    out["grid"] = [values.get(f"{GRID}{i}", g) for i, g in enumerate(out["grid"])]
    return out


# ---------------------------------------------------------------- fits


def _ranks(values: Sequence[int]) -> tuple[int, ...]:
    order = sorted(set(values))
    return tuple(order.index(v) for v in values)


def linear_fit(s: Sequence[int], m: Sequence[int]) -> Model | None:
    """m = a·s + b with integers a, b over every launch (two distinct values of s at least)."""
    pairs = sorted(set(zip(s, m, strict=True)))
    if len({p[0] for p in pairs}) < 2 or len(pairs) != len({p[0] for p in pairs}):
        return None
    (s0, m0), (s1, m1) = pairs[0], pairs[-1]
    a = Fraction(m1 - m0, s1 - s0)
    b = m0 - a * s0
    if a.denominator != 1 or b.denominator != 1 or any(a * x + b != y for x, y in pairs):
        return None
    return Model("linear", int(a), int(b))


def ceil_fits(s: Sequence[int], m: Sequence[int], slopes: Sequence[int], blocks: Sequence[int]) -> list[Model]:
    """Every c·cdiv(a·s, d) that gives each recorded value, for a among `slopes` and d among `blocks`."""
    if min(m) <= 0:
        return []
    largest = max(s)
    g = math.gcd(*m)
    found = []
    for c in (k for k in range(1, g + 1) if g % k == 0):
        for a in sorted(set(slopes)):
            for d in sorted(set(blocks)):
                k = math.gcd(a, d)  # cdiv(32·T, 2,048) is cdiv(T, 64): one model
                model = Model("ceil", a=a // k, c=c, d=d // k)
                # a block beyond the largest recorded a·s would make every recorded launch one block: no evidence
                if not 1 < d < a * largest or model in found:
                    continue
                if all(model.at(x) == y for x, y in zip(s, m, strict=True)):
                    found.append(model)
    return found


def fits_of(s: Sequence[int], m: Sequence[int], slopes: Sequence[int], blocks: Sequence[int],
            grid: bool = False) -> list[Model]:
    """The models of one member over the recorded launches. A grid dimension that stayed constant may still be a
    ceiling whose step the recording did not reach (T = 100 and 120 both give cdiv(T, 64) = 2): both are kept, so
    a size where they part is not checked."""
    if len(set(m)) == 1:
        return [Model("const", b=m[0])] + (ceil_fits(s, m, slopes, blocks) if grid else [])
    linear = linear_fit(s, m)
    if linear:
        return [linear]
    pow2 = [Model("pow2", a=a) for a in sorted(set(slopes))]
    return ceil_fits(s, m, slopes, blocks) + [p for p in pow2 if all(p.at(x) == y for x, y in zip(s, m, strict=True))]


def config_names(entry: Mapping[str, Any]) -> set[str]:
    """The launch's constexpr arguments and launch options (num_warps, ...): configuration, never a size."""
    params = entry["kernel"].get("params") or []
    return {p[0] for p in params if p[1]} | {k for k in entry["kwargs"] if k not in {p[0] for p in params}}


def _kind(name: str, config: set[str]) -> int:
    """0 an integer argument, 1 a shape dimension, 2 a stride or offset, 3 a constexpr or launch option."""
    if "." not in name:
        return 3 if name in config else 0
    return 1 if re.fullmatch(r"\w+\.\d+", name) else 2


@dataclass
class KernelAxes:
    """What the recording says about one kernel: its axes, and why it has none where it has none."""

    axes: list[ReplayAxis]
    none_why: str | None = None
    notes: list[str] = field(default_factory=list)


def _fitted(group: Sequence[str], table: Mapping[str, list[int]], groups: Mapping[tuple[int, ...], list[str]],
            blocks: Sequence[int], high: int, config: set[str], apart: Sequence[str]) -> tuple[ReplayAxis, list[str]]:
    """One group's axis with the fits of every member that follows it, and the group's members no model fits."""
    name = min(group, key=lambda k: (_kind(k, config), max(table[k]), k))
    s = table[name]
    base = max(range(len(s)), key=lambda i: (s[i], i))
    axis = ReplayAxis(name, s[base], high, base)
    slopes = [1] + [f.a for k in group if (f := linear_fit(s, table[k])) and f.a > 0]
    unknown = []
    for k, v in table.items():
        grid = k.startswith(GRID)
        if (len(set(v)) == 1 and not grid) or k in apart:
            continue  # a shape or argument that never changed, or a configuration apart from any size: as recorded
        models = fits_of(s, v, slopes, blocks, grid)
        if k in group and not models:
            unknown.append(k)
        elif len(set(v)) == 1:
            if len(models) > 1:  # a constant grid dim that a ceiling fits too: where they part is not checked
                axis.fits[k] = models
        elif models and (k in group or grid or _ranks(v) not in groups):
            axis.fits[k] = models
    return axis, unknown


def infer(entries: Sequence[Mapping[str, Any]], high: int = axes.DEFAULT_MAX) -> KernelAxes:
    """The axes of one kernel from its kept launches (in recording order)."""
    rows = [members(e) for e in entries]
    common = [k for k in rows[0] if all(k in r for r in rows)]
    notes = [f"{k} is not in every launch; kept as recorded" for k in rows[0] if k not in common][:3]
    table = {k: [r[k] for r in rows] for k in common}
    varying = {k: v for k, v in table.items() if len(set(v)) > 1}
    config = config_names(entries[0])
    groups: dict[tuple[int, ...], list[str]] = {}
    for k, v in varying.items():
        if not k.startswith(GRID):
            groups.setdefault(_ranks(v), []).append(k)
    # a group with no size in it (a block or num_warps a tuner chose per launch, a layout's stride) is no axis:
    # each axis grows from its base launch with that launch's configuration, and the row says so
    apart = [k for g in groups.values() if all(_kind(k, config) >= 2 for k in g) for k in g]
    groups = {r: g for r, g in groups.items() if any(_kind(k, config) < 2 for k in g)}
    notes += [f"{k} varies between launches ({', '.join(f'{x:,}' for x in table[k])}) and ranks them unlike any "
              "size: the base launch's value is kept" for k in apart]
    if not groups:
        one = "one launch recorded" if len(entries) == 1 else f"{len(entries)} launches recorded"
        return KernelAxes([], f"{one}: no axis varies between its launches; name one with --grow "
                              "(e.g. --grow x.0=..1M)", notes)
    # a ceiling's divisor: a power of two (Triton's blocks) or an integer every launch passes (its block constexpr)
    blocks = sorted({1 << i for i in range(1, MAX_BLOCK_LOG2 + 1)}
                    | {v[0] for v in table.values() if len(set(v)) == 1 and v[0] > 1})
    found = [_fitted(group, table, groups, blocks, high, config, apart) for group in groups.values()]
    explained = {k for axis, _ in found for k in axis.fits if len(set(table[k])) > 1} | set(apart)
    for axis, unknown in found:
        others = {k for other, _ in found if other is not axis for k in other.fits if k in varying}
        # a varying member fitted to two axes belongs to neither knowingly; one fitted to none is unexplained
        shared = [k for k in axis.fits if k in others and k not in groups.get(_ranks(varying[k]), [])]
        unexplained = unknown + [k for k in varying if k not in explained] + shared
        for k in shared:
            axis.fits.pop(k, None)
        grid = sorted(k for k in unexplained if k.startswith(GRID))
        rest = sorted(k for k in unexplained if not k.startswith(GRID))
        if rest:
            shown = ", ".join(f"{k} ({', '.join(f'{x:,}' for x in table[k])})" for k in rest[:3])
            axis.blocked = f"{shown} vary between launches as no single axis explains"
        if grid:
            axis.grid_unknown = (f"the grid's dependence on {axis.name} is unknown: {', '.join(grid)} "
                                 "fits no function of one axis over the recorded launches, so it stays as recorded")
    return KernelAxes([a for a, _ in found], None, notes)


# ---------------------------------------------------------------- --grow


@dataclass(frozen=True)
class GrowTerm:
    """`q.1+T=..1M`: the members that grow together (the first names the axis) and the range."""

    members: tuple[str, ...]
    low: int
    high: int


def parse_grow(text: str) -> list[GrowTerm]:
    """`q.1=..1M,B=1..64`; members joined by `+` grow in proportion to the first."""
    terms = []
    for term in filter(None, (t.strip() for t in text.split(","))):
        names, eq, span = term.partition("=")
        members_ = tuple(n.strip() for n in names.split("+"))
        if not eq or not all(_MEMBER.match(n) and not n.startswith(GRID) for n in members_):
            raise axes.AxisError(f"--grow {term!r}: write MEMBER[+MEMBER...]=LOW..HIGH, where a member is a tensor "
                                 "dimension (x.0: dim 0 of the tensor passed as x) or an integer argument (T); the "
                                 "grid is never named: it follows them where the recording tells how")
        low_text, dots, high_text = span.partition("..")
        low = axes.parse_size(low_text) if dots and low_text.strip() else 0
        high = axes.parse_size(high_text if dots else low_text)
        if high < max(low, 1):
            raise axes.AxisError(f"--grow {term!r}: the maximum {high:,} is below the start {low:,}")
        terms.append(GrowTerm(members_, low, high))
    return terms


def declared(entries: Sequence[Mapping[str, Any]], term: GrowTerm) -> ReplayAxis:
    """An axis `--grow` names on a kernel whose launches do not vary it: its members grow from the largest launch
    in proportion to the first; each named tensor dimension carries the strides of the dims outside it."""
    rows = [members(e) for e in entries]
    first = term.members[0]
    base = max(range(len(rows)), key=lambda i: (rows[i].get(first, 0), i))
    row = rows[base]
    missing = [m for m in term.members if m not in row]
    s0 = row.get(first, 0)
    axis = ReplayAxis(first, term.low or s0, term.high, base)
    if missing or s0 <= 0:
        axis.blocked = f"--grow names {', '.join(missing) or first}, which the launch has not (or as 0)"
        return axis
    for m in term.members:
        if row[m] % s0:
            axis.blocked = f"--grow: {m} = {row[m]:,} is no multiple of {first} = {s0:,}"
            return axis
        axis.fits[m] = [Model("linear", row[m] // s0, 0)]
        name, _, dim = m.rpartition(".")
        if name and dim.isdigit() and f"{name}.stride.{dim}" in row:
            inner = row[f"{name}.stride.{dim}"] * row[m]  # the extent of dims inside and at the grown one
            for k in (k for k in row if k.startswith(f"{name}.stride.") and k != f"{name}.stride.{dim}"):
                if inner and row[k] >= inner and row[k] % inner == 0:  # an outer dim: its stride grows with it
                    axis.fits[k] = [Model("linear", row[k] // inner * row[f"{name}.stride.{dim}"] * (row[m] // s0))]
    axis.grid_unknown = (f"the grid's dependence on {first} is unknown: no two recorded launches differ in it, "
                         "so the grid stays as recorded")
    return axis
