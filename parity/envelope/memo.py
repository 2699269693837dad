"""Each check's answer on disk, so a second envelope of unchanged kernels compiles and launches nothing.

A check (one compile and launch at one size, or the compile count over three sizes) is a function of the code it
ran and the toolchain that ran it. Its answer is stored under parity's own cache dir, keyed by a hash of:

- the source of every .py file of the top-level packages that define the spec's launcher, input maker and
  kernels (an edit anywhere in the kernel's package, its helpers or its launcher is another key), and Triton's
  own `cache_key` of each kernel (which covers the `@triton.jit` functions it calls from other packages);
- parity's own source (every .py of the package: a change to how a check runs is another key);
- the tier, its target and the versions of python, triton, triton-ascend, torch and torch_npu, and the
  bishengir-compile binary it calls (path, size, mtime);
- the settings a check depends on (the compile and case timeouts, forking) and the check's own parameters.

An answer the machine's load could have made (a compile that timed out, a child that crashed) is never stored:
the next envelope checks that size again. `--no-cache` on the command skips reading (and still stores).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

import parity
from parity import settings
from parity.backends.base import dist_version
from parity.compile.tools import jit_functions
from parity.envelope.limits import Observation
from parity.paths import cache_root
from parity.spec import KernelSpec

VOLATILE_KINDS = ("timeout", "crash")  # compile errors the load or a dying child made: not the kernel's answer
_DISTS = ("triton", "triton-ascend", "torch", "torch_npu")


def _digest(chunks: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(len(chunk).to_bytes(8, "little"))
        h.update(chunk)
    return h.hexdigest()


@cache
def tree_hash(root: str) -> str:
    """Every .py file under `root` (a package dir) or `root` itself (a module file): names and contents."""
    path = Path(root)
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return _digest(b for f in files for b in (str(f.relative_to(path) if path.is_dir() else f.name).encode(),
                                                f.read_bytes()))


def _top_root(obj: Any) -> str | None:
    """The dir of the top-level package (or the file of the top-level module) that defines `obj`."""
    name = getattr(obj, "__module__", None)
    top = sys.modules.get(name.split(".")[0]) if isinstance(name, str) else None
    where = getattr(top, "__file__", None)
    if where:
        return str(Path(where).parent) if Path(where).name == "__init__.py" else where
    paths = list(getattr(top, "__path__", None) or [])  # a namespace package: its first dir
    return str(paths[0]) if len(paths) == 1 else None


def code_hash(spec: KernelSpec) -> str | None:
    """The spec's code: the packages of its launcher, input maker and kernels, and each kernel's Triton key; None
    when one of them has no file to hash (defined in __main__, or a namespace package over several dirs), so
    that its answers are neither stored nor read."""
    fns = jit_functions(k for k in spec.kernels if not isinstance(k, str))
    owners = [spec.launch, spec.make_inputs, *(getattr(f, "fn", f) for f in fns)]
    found = [_top_root(o) for o in owners]
    if None in found:
        return None
    roots = sorted({r for r in found if r})
    keys = []
    for f in fns:
        try:
            keys.append(str(f.cache_key))  # its source and the jit functions it calls, as Triton hashes them
        except Exception as exc:  # a kernel Triton cannot hash here: its files still are
            keys.append(f"no cache_key: {type(exc).__name__}")
    return _digest([*(f"{r}:{tree_hash(r)}".encode() for r in roots), *(k.encode() for k in keys)])


@cache
def toolchain(tier: str, target: str) -> str:
    """parity's source, the tier and what compiles for it, and the settings a check's answer depends on."""
    # the real binary: ascend-compile puts a per-session wrapper (its compile memo) under parity's cache first on PATH
    outside = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not d.startswith(str(cache_root()))]
    tool = shutil.which("bishengir-compile", path=os.pathsep.join(outside))
    stat = os.stat(tool) if tool else None
    s = settings.current()
    parts = {"parity": tree_hash(str(Path(parity.__file__).parent)), "tier": tier, "target": target,
             "python": sys.version, "dists": {d: dist_version(d) for d in _DISTS},
             "bishengir": [tool, stat.st_size, stat.st_mtime] if stat else None,
             "settings": [s.compile_timeout_s, s.case_timeout_s, s.fork]}
    return _digest([json.dumps(parts, sort_keys=True).encode()])


def key(spec: KernelSpec, tier: str, target: str, what: str, args: Mapping[str, Any]) -> str | None:
    """The key of one check: `what` ("observe", "compiles"), its arguments (params, sizes) and all of the above;
    None when the spec's code cannot be hashed (nothing is stored or read for it)."""
    code = code_hash(spec)
    if code is None:
        return None
    plain = json.dumps({"what": what, "kernel": spec.name, "args": args}, sort_keys=True, default=repr)
    return _digest([toolchain(tier, target).encode(), code.encode(), plain.encode()])


class Memo:
    """The stored answers of one tier: <cache>/envelope/answers/<tier>/<key[:2]>/<key>.json."""

    def __init__(self, root: Path, read: bool = True) -> None:
        self.root = root
        self.read = read
        self.hits = 0

    def _path(self, k: str) -> Path:
        return self.root / k[:2] / f"{k}.json"

    def get(self, k: str | None) -> Any:
        """The stored value, or None (no key, not stored, unreadable, or reading is off)."""
        if not self.read or k is None:
            return None
        try:
            value = json.loads(self._path(k).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        self.hits += 1
        return value["value"] if isinstance(value, dict) else None

    def put(self, k: str | None, value: Any) -> None:
        if k is None:
            return
        path = self._path(k)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"value": value}), encoding="utf-8")
        os.replace(tmp, path)  # a reader never sees half an answer


def storable(obs: Observation) -> bool:
    """Whether an observation is the kernel's answer at that size, not the machine's (a timeout, a crash, a
    forked child killed or dead: parity.compile.fork's words; a child that raised is the kernel's answer)."""
    died = any("in its forked child" in m and "raised it in its forked child" not in m
               for m in [*(m for _, m in obs.launch_errors), obs.not_checked or ""])
    return not died and not any(kind in VOLATILE_KINDS for _, kind, _ in obs.compile_errors)


def dump(obs: Observation) -> dict[str, Any]:
    return asdict(obs)


def load(value: Any) -> Observation | None:
    """An Observation from its stored dict; None for anything else (an older layout is a miss, not an error)."""
    try:
        return Observation(**value) if isinstance(value, dict) else None
    except TypeError:
        return None
