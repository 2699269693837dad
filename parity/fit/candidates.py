"""The configs a fit search tries, in the order it tries them: pure functions, no triton import.

A config is a flat dict of constexpr values and compile options, as a record's `config` shows it.
First the kernel's own autotune configs, then configs derived from the one that overflowed: each
block-size constexpr (power of two, or multiple of 32) halved down to MIN_BLOCK, and the option changes the tier offers
(fewer pipeline stages on CUDA, auto multi-buffer off on Ascend), largest tile first.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# block-size constexprs by name: BLOCK, BLOCK_M, BLOCK_SIZE_N, XBLOCK, TILE_K, and fla's BK/BV/BM/BN tiles.
# HEAD_DIM, D or K are problem sizes, and fla's BT (and BC) is the chunk size every kernel of a chunked
# algorithm must share: halving one of those computes another problem, so they are never touched
BLOCK_NAME_RE = re.compile(r"^(\w*BLOCK\w*|\w*TILE\w*|B[KVMN])$")
MIN_BLOCK = 16  # tl.dot wants every dimension >= 16; a vector block below it is rarely what a porter wants
MAX_HALVINGS = 4
MAX_DERIVED = 40


def is_block_name(name: str) -> bool:
    return bool(BLOCK_NAME_RE.match(name))


def _pow2(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 2 and value & (value - 1) == 0


def _halvable(value: Any) -> bool:
    """A power of two, or a multiple of 2·MIN_BLOCK (the GDN port's LARGE_BLOCK_T = 1216 = 76·16)."""
    return _pow2(value) or (isinstance(value, int) and not isinstance(value, bool) and value > 0
                            and value % (2 * MIN_BLOCK) == 0)


def block_keys(config: Mapping[str, Any]) -> list[str]:
    """The constexprs of `config` a search may halve."""
    return sorted(k for k, v in config.items() if is_block_name(k) and _halvable(v))


def tile(config: Mapping[str, Any], keys: Sequence[str]) -> int:
    """The tile a config asks for: the product of its block sizes (1 where it sets none)."""
    return math.prod(int(config[k]) for k in keys if _halvable(config.get(k)))


def halvings(value: int) -> list[int]:
    """value, value/2, ... down to MIN_BLOCK (or value itself when it is already smaller); a value that is
    not a power of two only while its half stays a multiple of MIN_BLOCK."""
    out = [value]
    while len(out) <= MAX_HALVINGS and out[-1] // 2 >= MIN_BLOCK and out[-1] % 2 == 0 and (
            _pow2(out[-1]) or (out[-1] // 2) % MIN_BLOCK == 0):
        out.append(out[-1] // 2)
    return out


def option_variants(options: Mapping[str, Any], offers: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The option changes a tier offers that apply here: {} (unchanged) first, then each offer on its own,
    then all of them together. `offers` maps an option to the values to try, most capable first."""
    variants: list[dict[str, Any]] = [{}]
    changes = [{k: v} for k, values in offers.items() for v in values if k in options and options[k] != v]
    variants += changes
    together: dict[str, Any] = {}
    for change in changes:  # the last value of each option: the fewest stages, buffers off
        together.update(change)
    if len(together) > 1:
        variants.append(together)
    return variants


def derived(failing: Mapping[str, Any], offers: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Configs derived from the failing one, largest tile first, then fewest option changes."""
    keys = block_keys(failing)
    found = []
    for values in itertools.product(*(halvings(int(failing[k])) for k in keys)):
        blocks = dict(zip(keys, values, strict=True))
        for rank, change in enumerate(option_variants(failing, offers)):
            if change or blocks != {k: failing[k] for k in keys}:  # an option is shown only where it changed
                found.append((-tile(blocks, keys), rank, {**blocks, **change}))
    found.sort(key=lambda item: (item[0], item[1]))
    return [config for _, _, config in found[:MAX_DERIVED]]


def ordered(autotune: Iterable[Mapping[str, Any]], failing: Mapping[str, Any],
            offers: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every candidate once: the autotune configs (largest tile first), then the derived ones."""
    own = [dict(c) for c in autotune]
    keys = sorted({k for c in own for k in block_keys(c)})
    own.sort(key=lambda c: -tile(c, keys))
    seen: list[dict[str, Any]] = list(own)
    for config in derived(failing, offers):
        covered = any(all(o.get(k) == v for k, v in config.items()) for o in own)  # an autotune config already
        if not covered and config not in seen:
            seen.append(config)
    return seen


def row_extents(source: str, constants: Mapping[str, Any]) -> list[str]:
    """The constexprs a kernel uses as the extent of its rows: `tl.arange(0, NAME)[:, None]`. A kernel
    whose block sizes are its problem sizes (triton-ascend's gather test) has no tile constexpr to halve;
    its rows are what a launcher can tile."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return []
    found = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "arange"
                and len(node.value.args) == 2 and isinstance(node.value.args[1], ast.Name)):
            continue
        index = node.slice
        if (isinstance(index, ast.Tuple) and len(index.elts) == 2 and isinstance(index.elts[0], ast.Slice)
                and isinstance(index.elts[1], ast.Constant) and index.elts[1].value is None):
            found.add(node.value.args[1].id)
    return sorted(n for n in found if isinstance(constants.get(n), int) and not isinstance(constants[n], bool)
                  and constants[n] >= 2)


def row_splits(constants: Mapping[str, Any], rows: Sequence[str]) -> list[dict[str, Any]]:
    """The row extents divided together by 2, 4, ... (MAX_HALVINGS at most), largest block first."""
    out = []
    for step in range(1, MAX_HALVINGS + 1):
        factor = 2 ** step
        if any(int(constants[r]) % factor for r in rows):
            break
        out.append({r: int(constants[r]) // factor for r in rows})
    return out


def label(config: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(config.items()))
