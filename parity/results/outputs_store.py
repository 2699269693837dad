"""Per-case outputs kept for cross-backend comparison, as .npz (never pickle).

Small outputs are stored whole. Large ones keep a digest of their exact bytes plus
values at sampled positions; the positions depend only on the output's size, so
every backend samples the same elements. Each file also carries a digest of the
case's inputs, which proves that two backends were fed bit-identical data.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from parity.results.dirs import OUTPUTS

OUTPUTS_DIR = OUTPUTS  # the results dir's outputs/ (parity.results.dirs owns the names)
FULL_MAX_NUMEL = 1 << 14  # outputs up to 16384 elements are stored whole
N_SAMPLES = 2048
STORE_VERSION = 1


def input_digest(inputs: Mapping[str, Any]) -> str:
    """sha256 over every input's name, dtype, shape and exact bytes (scalars by repr)."""
    h = hashlib.sha256()
    for name in sorted(inputs):
        value = inputs[name]
        h.update(name.encode())
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            h.update(f"{t.dtype}{tuple(t.shape)}".encode())
            if t.numel():
                h.update(t.view(torch.uint8).numpy().tobytes())
        else:
            h.update(repr(value).encode())
    return h.hexdigest()


def case_filename(kernel: str, case_id: str, suffix: str = "") -> str:
    """A file or directory name for a case that is safe on every filesystem and stable."""
    name = re.sub(r"[^A-Za-z0-9_.=,+-]", "_", f"{kernel}__{case_id}")
    if len(name) > 150:
        name = f"{name[:130]}_{hashlib.sha256(name.encode()).hexdigest()[:12]}"
    return name + suffix


def path_for(results_dir: Path, kernel: str, case_id: str) -> Path:
    return results_dir / OUTPUTS_DIR / case_filename(kernel, case_id, ".npz")


def sample_indices(numel: int, n: int = N_SAMPLES) -> np.ndarray:
    """Flat positions to keep from a large output; a function of its size only."""
    if numel <= n:
        return np.arange(numel, dtype=np.int64)
    return np.sort(np.random.default_rng(numel).choice(numel, size=n, replace=False)).astype(np.int64)


def _as_array(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.is_floating_point() and t.dtype not in (torch.float32, torch.float64):
        t = t.to(torch.float32)  # exact for fp16/bf16; numpy has no bf16
    return t.contiguous().numpy()


def payload(outputs: Mapping[str, torch.Tensor], digest: str | None,
            valid: Mapping[str, torch.Tensor | None] | None = None) -> dict[str, np.ndarray]:
    """The arrays stored for one case; elements outside `valid` are blanked to NaN on every backend."""
    arrays: dict[str, np.ndarray] = {"__version__": np.array(STORE_VERSION),
                                     "__input_digest__": np.array(digest or "")}
    for name, tensor in outputs.items():
        mask = (valid or {}).get(name)
        if mask is not None and tensor.is_floating_point():
            tensor = torch.where(mask.to(torch.bool).expand_as(tensor).cpu(), tensor.cpu(),
                                 torch.full((), float("nan"), dtype=tensor.dtype))
        arr = _as_array(tensor)
        arrays[f"shape.{name}"] = np.array(arr.shape, dtype=np.int64)
        if arr.size <= FULL_MAX_NUMEL:
            arrays[f"full.{name}"] = arr
            continue
        arrays[f"digest.{name}"] = np.array(hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest())
        idx = sample_indices(arr.size)
        arrays[f"index.{name}"] = idx
        arrays[f"sample.{name}"] = arr.reshape(-1)[idx]
    return arrays


def save(path: Path, arrays: Mapping[str, np.ndarray]) -> Path:
    """Atomic write, so a report never reads half a file from an interrupted run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.npz")
    np.savez(tmp, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as its allow_pickle
    os.replace(tmp, path)
    return path


def save_case(results_dir: Path, spec: Any, case: Any, outputs: Mapping[str, torch.Tensor] | None,
              digest: str | None) -> Path | None:
    """Store one case's outputs (no-op when the case produced none)."""
    if not outputs:
        return None
    valid = {name: spec.valid(name, case.params, t.shape) for name, t in outputs.items()} if spec.valid else None
    return save(path_for(results_dir, spec.name, case.id), payload(outputs, digest, valid))


@dataclass(frozen=True)
class StoredOutput:
    shape: tuple[int, ...]
    full: np.ndarray | None
    digest: str | None
    index: np.ndarray | None
    sample: np.ndarray | None

    def values(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The comparable values (flat) and their flat positions (None: every element)."""
        if self.full is not None:
            return self.full.reshape(-1), None
        assert self.sample is not None
        return self.sample, self.index


@dataclass(frozen=True)
class StoredCase:
    input_digest: str
    outputs: dict[str, StoredOutput]


def load(path: Path) -> StoredCase:
    with np.load(path, allow_pickle=False) as data:
        files = set(data.files)
        names = sorted(k.split(".", 1)[1] for k in files if k.startswith("shape."))
        outputs = {}
        for n in names:
            outputs[n] = StoredOutput(
                shape=tuple(int(s) for s in data[f"shape.{n}"]),
                full=data[f"full.{n}"] if f"full.{n}" in files else None,
                digest=str(data[f"digest.{n}"]) if f"digest.{n}" in files else None,
                index=data[f"index.{n}"] if f"index.{n}" in files else None,
                sample=data[f"sample.{n}"] if f"sample.{n}" in files else None)
        return StoredCase(input_digest=str(data["__input_digest__"]), outputs=outputs)
