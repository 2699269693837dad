"""`parity merge OUT DIR...`: the results dirs of one tier's shards (`--shard K/N`) as one results dir.

results.jsonl is the shards' records in the order a single run writes them (kernel, case, suite); env.json is
the first shard's, less its shard fields, with `merged_shards` (each shard's dir, share, machine and record
count); the repro folders and stored outputs are copied; REPORT.md is written afresh from the merged records.
Dirs of different tiers, levels, seeds or releases are refused, as are an incomplete set of shards and two
dirs holding the same case: each would make a report that looks whole and is not. The shard dirs are read only.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from parity.report import backend_md
from parity.results import MERGED_NAME, Record, atomic_write_text, load_results, write_results
from parity.results import dirs as rd

# env.json keys that must agree between shards: a merged dir speaks of one tier on one toolchain
SAME = ("backend", "level", "seed", "python", "torch", "triton", "triton_ascend", "torch_npu", "ascendnpu_ir",
        "cann", "target_arch", "device_name", "replay", "git_commit")
SHARD_KEYS = ("shard", "shard_kernels")
OWN_FILES = (MERGED_NAME, rd.ENV, rd.REPORT)  # written afresh; everything else is copied


class MergedShard(TypedDict):
    """One shard's entry of a merged dir's env.json `merged_shards`."""

    dir: str
    shard: str | None  # its env.json `shard`, "K/N" (None: a plain results dir)
    machine: str | None
    records: int
    kernels: list[str] | None  # its env.json `shard_kernels`


class MergeError(RuntimeError):
    """Dirs that cannot be one results dir: the message names them and what to do."""


def record_key(record: Record) -> tuple[str, str, str]:
    return (record["kernel"], record["case"], record.get("suite") or "")


def check_envs(dirs: Sequence[Path], envs: Sequence[Mapping[str, Any]]) -> None:
    """Refuse dirs of different tiers or toolchains, and an incomplete or repeated set of shards."""
    for key in SAME:
        values = {json.dumps(e.get(key), sort_keys=True) for e in envs}
        if len(values) > 1:
            seen = ", ".join(f"{d}: {e.get(key)!r}" for d, e in zip(dirs, envs, strict=True))
            raise MergeError(f"the dirs differ in env.json's {key!r} ({seen}); merge only the shards of one tier's "
                             "run (same tier, level, seed and releases), and pass the others to `parity report`")
    shards = [e.get("shard") for e in envs]
    if not any(shards):
        return  # plain results dirs of disjoint kernel selections: the case check below still holds
    if not all(shards):
        plain = ", ".join(str(d) for d, s in zip(dirs, shards, strict=True) if not s)
        raise MergeError(f"{plain}: not a shard (its env.json has no 'shard'); merge the dirs of one "
                         "`--shard K/N` run, all of them")
    counts = {int(str(s).split("/")[1]) for s in shards}
    if len(counts) > 1:
        raise MergeError(f"shards of different splits ({', '.join(map(str, shards))}); merge the N dirs of one "
                         "`--shard K/N` run")
    n = counts.pop()
    have = [int(str(s).split("/")[0]) for s in shards]
    repeated = sorted({k for k in have if have.count(k) > 1})
    missing = sorted(set(range(1, n + 1)) - set(have))
    if repeated:
        raise MergeError(f"shard(s) {', '.join(f'{k}/{n}' for k in repeated)} given twice; pass each shard's dir "
                         "once")
    if missing:
        raise MergeError(f"shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing: a merged report without "
                         f"them would lack their kernels; pass all {n} shard dirs (download every shard's artifact)")


def merged_records(dirs: Sequence[Path], per_dir: Sequence[Sequence[Record]]) -> list[Record]:
    """Every dir's records in a single run's order; a case in two dirs is an error."""
    where: dict[tuple[str, str, str], Path] = {}
    for d, records in zip(dirs, per_dir, strict=True):
        for r in records:
            key = record_key(r)
            if key in where:
                raise MergeError(f"{key[0]} [{key[1]}] is in both {where[key]} and {d}: the dirs overlap; merge the "
                                 "shards of one run (each kernel runs on one shard)")
            where[key] = d
    return sorted((r for records in per_dir for r in records), key=record_key)


def merged_env(dirs: Sequence[Path], envs: Sequence[Mapping[str, Any]],
               per_dir: Sequence[Sequence[Record]]) -> dict[str, Any]:
    env = {k: v for k, v in envs[0].items() if k not in SHARD_KEYS and k != "wall_phases"}
    env["interrupted"] = any(e.get("interrupted") for e in envs)
    env["merged_shards"] = [MergedShard(dir=str(d), shard=e.get("shard"), machine=e.get("machine"), records=len(recs),
                                        kernels=e.get("shard_kernels"))
                            for d, e, recs in zip(dirs, envs, per_dir, strict=True)]
    return env


def copy_files(src: Path, out: Path) -> None:
    """Everything a shard's dir holds besides its own results files (repros, stored outputs), into `out`;
    a path two shards both hold must be the same file."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] in OWN_FILES or rel.parts[0].startswith(".") or not path.is_file():
            continue
        target = out / rel
        if target.exists():
            if target.read_bytes() != path.read_bytes():
                raise MergeError(f"{rel} differs between two shard dirs ({src} and another); they are not the "
                                 "shards of one run")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def read_env(d: Path) -> dict[str, Any]:
    path = d / rd.ENV
    try:
        env = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MergeError(f"{path}: unreadable ({exc}); a shard's dir needs the env.json its run wrote") from None
    if not isinstance(env, dict):
        raise MergeError(f"{path}: not a JSON object; a shard's dir needs the env.json its run wrote")
    return env


def merge(out: Path, dirs: Sequence[Path]) -> str:
    """Write the merged results dir `out` (new or empty); a line saying what it holds."""
    if not dirs:
        raise MergeError("name the shard dirs to merge: `parity merge OUT DIR...`")
    if out.exists() and any(out.iterdir()):
        raise MergeError(f"{out} exists and is not empty; name a new dir (parity never rewrites a results dir)")
    for d in dirs:
        if not (d / MERGED_NAME).is_file():
            raise MergeError(f"{d}: holds no {MERGED_NAME}; pass the results dir a `--shard K/N` run wrote")
    envs = [read_env(d) for d in dirs]
    check_envs(dirs, envs)
    per_dir = [load_results(d) for d in dirs]
    records = merged_records(dirs, per_dir)
    env = merged_env(dirs, envs, per_dir)
    # built beside OUT and moved into place whole: a merge refused half-way leaves no dir that looks merged
    staging = out.parent / f".{out.name}.merging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for d in dirs:
            copy_files(d, staging)
        write_results(staging, records)
        atomic_write_text(staging / rd.ENV, json.dumps(env, indent=2, sort_keys=True) + "\n")
        atomic_write_text(staging / rd.REPORT, backend_md.render_report(records, env))
        if out.exists():
            out.rmdir()  # empty, checked above
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return f"merged {len(dirs)} dir(s), {len(records)} records of {env.get('backend')} into {out}"
