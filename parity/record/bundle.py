"""The bundle: one directory that holds a recorded workload's launches, readable without running any code.

    bundle.json                      header: format, schema, command, options, the recording host's versions
    manifest-<pid>.jsonl             one JSON object per line, each process its own file:
                                       {"type": "process"}  the process and its environment
                                       {"type": "launch"}   one kept launch (kernel, args, grid, buffers, outputs)
                                       {"type": "unrecorded"} a launch that could not be kept, with the reason
                                       {"type": "counts"}   per dedupe key: kept and seen; the budget's state
    tensors/<launch id>.safetensors  the launch's buffers: `before.<buffer>` (the bytes it started from) and
                                     `after.<buffer>` (the bytes it left, for each storage it changed)
    sources/<sha>.py                 a kernel's captured source with its @triton.jit helpers (for replay
                                     where its module is not importable)

Tensors are safetensors only, never pickle: loading a bundle someone else wrote runs no code. A file
a bundle may not hold (a pickle, a torch.save archive, anything else) makes the whole bundle refused.
Each launch's tensor file is written before its manifest line and renamed into place, so a bundle
cut at any moment (Ctrl-C, a kill) is valid up to its last line.

Bad input is never a pass: a launch line carries the sha256 of its tensor file as stored (`sha256`) and of
each tensor's stored bytes (`tensor_sha256`), checked when the file is read; a file altered or truncated since
is a BundleError naming it (that launch's case is an `error` owned by "bundle", the others replay). A bundle
with no manifest, or one that cannot be read, stops the run. Bundles recorded before digests still load, and
say they are not verified (`verified`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # torch is imported only where tensors are read or written: `parity record` itself needs none
    import torch

FORMAT = "parity-record-bundle"
SCHEMA = 1
HEADER = "bundle.json"
MANIFEST_GLOB = "manifest-*.jsonl"
TENSORS = "tensors"
SOURCES = "sources"
ALLOWED_SUFFIXES = {HEADER: None, ".jsonl": None, ".safetensors": TENSORS, ".py": SOURCES}
# the files a launch line may name: inside the bundle, never a path out of it
TENSOR_PATH = re.compile(r"^tensors/[\w.-]+\.safetensors$")
SOURCE_PATH = re.compile(r"^sources/[\w.-]+\.py$")
PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
ZIP_MAGIC = b"PK\x03\x04"  # torch.save's archive, which holds a pickle


# launch files above this size are memory-mapped when read (on the CPU here: mapping one costs about 0.2 ms, and
# reading, parsing and copying 1 MB 0.6 ms, 64 MB 130 ms, against 0.2 ms and 48 ms mapped)
MAPPED_ABOVE_BYTES = 1 << 19


class BundleError(RuntimeError):
    """A bundle (or one file of it) cannot be read; the message names the file and what to do."""

    parity_error_kind = "bundle"  # a record of the case it stops is an `error` owned by the bundle (error_kind)


RE_RECORD = "record the workload again (`parity record --out NEW_DIR -- CMD`) and replay the new bundle"
NOT_VERIFIED = "not verified: recorded before bundles carried a sha256 per tensor file"


# ---------------------------------------------------------------- writing


def write_header(root: Path, command: list[str], options: dict[str, Any], env: dict[str, Any]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / TENSORS).mkdir(exist_ok=True)
    (root / SOURCES).mkdir(exist_ok=True)
    header = {"format": FORMAT, "schema": SCHEMA, "command": command, "options": options, "env": env}
    _atomic_bytes(root / HEADER, (json.dumps(header, indent=1, sort_keys=True) + "\n").encode())


def _atomic_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_tensors(root: Path, launch_id: str, tensors: dict[str, torch.Tensor]) -> tuple[str, int, dict[str, Any]]:
    """The launch's tensor file (renamed into place whole); returns its path in the bundle, its size and the
    digests its launch line carries (`digests`)."""
    from safetensors.torch import save

    data = save({k: v.contiguous() for k, v in tensors.items()})
    rel = f"{TENSORS}/{launch_id}.safetensors"
    _atomic_bytes(root / rel, data)
    return rel, len(data), digests(data)


def digests(data: bytes) -> dict[str, Any]:
    """The sha256 of a tensor file as stored, and of each of its tensors' stored bytes (which name a change)."""
    return {"sha256": hashlib.sha256(data).hexdigest(),
            "tensor_sha256": {k: hashlib.sha256(v).hexdigest() for k, v in stored_tensors(data).items()}}


def stored_tensors(data: bytes) -> dict[str, memoryview]:
    """Each tensor's bytes in a safetensors file, by name, from its header (8 bytes of length, then JSON)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    view, start = memoryview(data), 8 + n
    return {k: view[start + v["data_offsets"][0]: start + v["data_offsets"][1]]
            for k, v in header.items() if k != "__metadata__"}


def write_source(root: Path, name: str, text: str) -> str:
    rel = f"{SOURCES}/{name}.py"
    (root / SOURCES).mkdir(parents=True, exist_ok=True)
    if not (root / rel).exists():
        _atomic_bytes(root / rel, text.encode())
    return rel


class ManifestWriter:
    """This process's manifest file; every line is flushed as it is written."""

    def __init__(self, root: Path) -> None:
        self.path = root / f"manifest-{os.getpid()}.jsonl"
        self._fh = open(self.path, "a", encoding="utf-8")  # open for the process's life

    def write(self, entry: dict[str, Any]) -> None:
        self._fh.write(json.dumps({"schema": SCHEMA, **entry}, sort_keys=True) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def size_on_disk(root: Path) -> int:
    return sum(e.stat().st_size for sub in (TENSORS, SOURCES) if (root / sub).is_dir()
               for e in os.scandir(root / sub) if e.is_file())


# ---------------------------------------------------------------- reading


@dataclass
class Bundle:
    root: Path
    header: dict[str, Any]
    launches: list[dict[str, Any]]
    unrecorded: list[dict[str, Any]] = field(default_factory=list)
    processes: list[dict[str, Any]] = field(default_factory=list)
    counts: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # lines skipped, each naming its file

    def tensors(self, launch: Mapping[str, Any], prefix: str) -> dict[str, torch.Tensor]:
        return read_tensors(self.root / launch["tensors"], prefix, launch)

    def before_after(self, launch: Mapping[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        """The launch's buffers as it found them and as it left them, from one read of its file."""
        found = read_tensors(self.root / launch["tensors"], "", launch)
        return by_prefix(found, "before."), by_prefix(found, "after.")

    def verified(self) -> str:
        """Whether the launches' tensor files are checked against digests on load, in words."""
        bare = sum(1 for e in self.launches if not e.get("sha256"))
        if not bare:
            return "checked against the sha256 the recording wrote for each, when read"
        return NOT_VERIFIED + ("" if bare == len(self.launches) else f" ({bare} of {len(self.launches)} launches)")

    def dropped(self) -> dict[str, int]:
        """Launches seen but not kept, per dedupe key (from every process that finished its counts)."""
        out: dict[str, int] = {}
        for c in self.counts:
            for key, n in c.get("keys", {}).items():
                out[key] = out.get(key, 0) + max(0, n["seen"] - n["kept"])
        return out


def _check_schema(what: str, schema: Any) -> None:
    if not isinstance(schema, int):
        raise BundleError(f"{what}: no integer `schema`; not a parity record bundle (record one with "
                          "`parity record --out DIR -- CMD`)")
    if schema > SCHEMA:
        raise BundleError(f"{what}: written with bundle schema {schema}, newer than this parity reads "
                          f"(schema {SCHEMA}); replay it with the parity release that recorded it, or upgrade parity")


def safetensors_head(head: bytes, size: int) -> bool:
    """The first 9 bytes of a safetensors file: a little-endian u64 header length that fits the file, then the
    header's `{`. A header 0x280 to 0x580 bytes long starts with 80 02..80 05, a pickle's magic; this tells them
    apart (a pickle's bytes 2 to 7 are opcodes and data, never a length of zeros then `{`)."""
    if len(head) < 9:
        return False
    length = int.from_bytes(head[:8], "little")
    return 0 < length <= size - 8 and head[8:9] == b"{"


def refuse_foreign_files(root: Path) -> None:
    """Every file must be one a bundle holds; a pickle or a torch.save archive refuses the whole bundle."""
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        rel = path.relative_to(root)
        with open(path, "rb") as fh:
            head = fh.read(9)
        if (head[:2] in PICKLE_MAGIC or head[:4] == ZIP_MAGIC) and not safetensors_head(head, path.stat().st_size):
            raise BundleError(f"{path}: holds a pickle (or a torch.save archive); a bundle holds tensors only "
                              "as safetensors, so this bundle is refused: loading a pickle would run code. "
                              "Record it again with `parity record`")
        suffix = HEADER if path.name == HEADER else path.suffix
        where = ALLOWED_SUFFIXES.get(suffix, "?")
        if where == "?" or (where is not None and rel.parts[0] != where) or (where is None and len(rel.parts) > 1):
            raise BundleError(f"{path}: a bundle holds no such file (only {HEADER}, manifest-*.jsonl, "
                              f"{TENSORS}/*.safetensors, {SOURCES}/*.py); remove it or record the bundle again")


def load_bundle(root: Path | str) -> Bundle:
    """The bundle's header and manifest lines; a broken line is skipped and named in `problems`."""
    root = Path(root)
    if not (root / HEADER).is_file():
        raise BundleError(f"{root}: no {HEADER}; pass the directory `parity record --out DIR` wrote")
    refuse_foreign_files(root)
    try:
        header = json.loads((root / HEADER).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{root / HEADER}: not JSON ({exc}); the bundle's header is damaged, record it again") \
            from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BundleError(f"{root / HEADER}: not a parity record bundle header (format {FORMAT!r} expected)")
    _check_schema(str(root / HEADER), header.get("schema"))
    bundle = Bundle(root, header, [])
    manifests = sorted(root.glob(MANIFEST_GLOB))
    if not manifests:
        raise BundleError(f"{root}: no {MANIFEST_GLOB} (the index of the recorded launches): the bundle is incomplete "
                          f"(its manifest was removed, or left out of a copy), or its command made no Triton launch "
                          f"under the recorder; copy the manifest back or {RE_RECORD}")
    lists = {"launch": bundle.launches, "unrecorded": bundle.unrecorded, "process": bundle.processes,
             "counts": bundle.counts}
    for path in manifests:
        for n, entry in _lines(path, bundle.problems):
            _check_schema(f"{path}:{n}", entry.get("schema"))
            kind = entry.get("type")
            target = lists.get(kind) if isinstance(kind, str) else None
            if target is None:
                bundle.problems.append(f"{path}:{n}: unknown entry type {kind!r}, skipped")
                continue
            outside = _outside_paths(entry) if kind == "launch" else []
            if outside:
                bundle.problems.append(f"{path}:{n}: names {', '.join(map(repr, outside))}, not a file of this bundle "
                                       "(tensors/*.safetensors, sources/*.py); the launch is skipped")
                continue
            target.append(entry)
    bundle.launches.sort(key=lambda e: (e.get("order", 0), e["id"]))
    for problem in bundle.problems:
        warnings.warn(problem, stacklevel=2)
    return bundle


def _outside_paths(entry: dict[str, Any]) -> list[str]:
    """The file names a launch line gives that are not plain files of the bundle (a `../` escape, say)."""
    tensors, source = entry.get("tensors"), (entry.get("kernel") or {}).get("source")
    bad = [] if isinstance(tensors, str) and TENSOR_PATH.match(tensors) else [str(tensors)]
    return bad + ([str(source)] if source is not None and not SOURCE_PATH.match(str(source)) else [])


def _lines(path: Path, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:  # a whole process's launches unknown: nothing says which cases
        raise BundleError(f"{path}: the manifest cannot be read ({exc}); {RE_RECORD}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"{path}:{n}: not a complete JSON line (a recording cut mid-write?); skipped")
            continue
        if isinstance(entry, dict):
            yield n, entry
        else:
            problems.append(f"{path}:{n}: not a JSON object; skipped")


def read_tensors(path: Path, prefix: str, launch: Mapping[str, Any] | None = None) -> dict[str, torch.Tensor]:
    """The tensors of one launch file whose names start with `prefix` ("before." or "after."), by buffer. Each is
    a tensor of its own, in memory allocated as any tensor's (so aligned as Triton's pointer specialization sees
    a recorded launch's), which a replay may write, and which outlives the file. Where the launch line carries
    digests, the file is checked against them first (`check_digests`)."""
    from safetensors import SafetensorError
    from safetensors.torch import load, load_file

    if launch is not None:
        check_digests(path, launch)
    try:
        # a big file is memory-mapped (no bytes object of it to read, then parse); a small one is read whole, as
        # mapping it costs more. Either way each wanted tensor is copied once into memory of its own: the map's
        # views sit at any offset of the file, and load's share read-only bytes objects
        found = load_file(path) if path.stat().st_size > MAPPED_ABOVE_BYTES else load(path.read_bytes())
        found = {k: v.clone() for k, v in found.items() if k.startswith(prefix)}
    except (OSError, SafetensorError, ValueError) as exc:
        raise BundleError(f"bundle file {path} is truncated or corrupt ({exc}); this launch cannot be replayed "
                          f"(the bundle's other launches still are); {RE_RECORD}") from None
    return by_prefix(found, prefix)


def check_digests(path: Path, launch: Mapping[str, Any]) -> None:
    """A BundleError naming the file and what changed where it is not the file the recording wrote: its size,
    then its sha256 (and which tensors' bytes differ). A launch line without digests (an older bundle) passes
    unchecked: `Bundle.verified` says so."""
    want = launch.get("sha256")
    if not want:
        return
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BundleError(f"bundle file {path} cannot be read ({exc}); this launch cannot be replayed; "
                          f"{RE_RECORD}") from None
    size = launch.get("bytes")
    if isinstance(size, int) and len(data) != size:
        raise BundleError(f"bundle file {path} is truncated or altered: {len(data)} bytes where the recording wrote "
                          f"{size}; this launch cannot be replayed (the others still are); {RE_RECORD}")
    if hashlib.sha256(data).hexdigest() == want:
        return
    try:
        stored = {k: hashlib.sha256(v).hexdigest() for k, v in stored_tensors(data).items()}
    except (ValueError, KeyError, TypeError, struct.error):  # the header itself was changed
        stored = {}
    recorded = launch.get("tensor_sha256") or {}
    changed = sorted(k for k in recorded if stored.get(k) != recorded[k]) or ["its safetensors header"]
    raise BundleError(f"bundle file {path} does not match the sha256 its manifest recorded (changed: "
                      f"{', '.join(changed)}): altered since it was recorded, so its bytes are not the launch's; "
                      f"this launch cannot be replayed (the others still are); {RE_RECORD}")


def by_prefix(found: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {k[len(prefix):]: v for k, v in found.items() if k.startswith(prefix)}
