"""bishengir-compile, remembered: the same input and flags to the same compiler give the same output.

triton-ascend runs `bishengir-compile <dir>/kernel.ttadapter.mlir <flags> -o <dir>/kernel` once per
Triton compile, and Triton compiles once per config. Configs that differ only in what triton-ascend ignores
(num_warps, num_stages: its NPUOptions never reach the adapter's MLIR or the flags) hand bishengir the very
same bytes, at several seconds each (gdn_solve_tril's 64x64 inverse: about 9 s per compile on 2 cores).

ascend-compile puts this script first on PATH under the name `bishengir-compile` (parity.backends.ascend.
compile). A compile call is keyed by the real compiler (path, size, mtime), its flags with the output dir
replaced by a placeholder, the input's bytes and the environment variables the compiler's family reads;
on a hit the remembered exit code, stdout, stderr and output files are given back, on a miss the real
compiler runs and its answer is kept. A call killed by a signal is never kept. Anything that is not a
plain compile (--help, --version, a flag that writes into the working directory such as
--enable-memory-display) goes straight to the real compiler.

Stdlib only: it runs as its own process, outside parity's imports.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# flags whose output lands outside the -o dir (the working directory): never remembered
SIDE_EFFECT_FLAGS = ("display", "dump")
ENV_PREFIXES = ("BISHENG", "ASCEND")  # not Triton's: its cache dirs are per session
PLACEHOLDER = "<out>"


def compile_call(args: list[str]) -> tuple[Path, Path] | None:
    """(input, output base) of a plain compile call, or None for anything else."""
    if "-o" not in args or any(s in a for a in args for s in SIDE_EFFECT_FLAGS):
        return None
    i = args.index("-o")
    if i + 1 >= len(args):
        return None
    inputs = [a for a in args if a.endswith(".mlir") and not a.startswith("-")]
    if len(inputs) != 1:
        return None
    return Path(inputs[0]), Path(args[i + 1])


def key_of(real: str, args: list[str], source: Path, out: Path) -> str:
    stat = os.stat(real)
    outdir = str(out.parent)
    h = hashlib.sha256()
    h.update(json.dumps([os.path.realpath(real), stat.st_size, stat.st_mtime_ns,
                         [a.replace(outdir, PLACEHOLDER) for a in args],
                         sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIXES))]).encode())
    h.update(source.read_bytes())
    return h.hexdigest()


def replay(entry: Path, outdir: Path) -> int:
    meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
    for name in meta["files"]:
        shutil.copyfile(entry / "files" / name, outdir / name)
    sys.stdout.buffer.write((entry / "stdout").read_bytes())
    sys.stderr.buffer.write((entry / "stderr").read_bytes())
    return int(meta["returncode"])


def keep(entry: Path, outdir: Path, before: set[str], source: Path, done: subprocess.CompletedProcess[bytes]) -> None:
    """Store the call's answer; written to a temporary dir and renamed, so a reader sees all of it or none."""
    made = sorted(p.name for p in outdir.iterdir() if p.is_file() and p.name not in before and p != source)
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
    (tmp / "files").mkdir()
    for name in made:
        shutil.copyfile(outdir / name, tmp / "files" / name)
    (tmp / "stdout").write_bytes(done.stdout)
    (tmp / "stderr").write_bytes(done.stderr)
    (tmp / "meta.json").write_text(json.dumps({"returncode": done.returncode, "files": made}), encoding="utf-8")
    try:
        os.rename(tmp, entry)
    except OSError:  # another worker kept the same answer first
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    store, real, args = Path(argv[0]), argv[1], argv[2:]
    call = compile_call(args)
    if call is None:
        os.execv(real, [real, *args])
    source, out = call
    entry = store / key_of(real, args, source, out)
    if (entry / "meta.json").is_file():
        return replay(entry, out.parent)
    before = {p.name for p in out.parent.iterdir()} if out.parent.is_dir() else set()
    done = subprocess.run([real, *args], capture_output=True, check=False)
    sys.stdout.buffer.write(done.stdout)
    sys.stderr.buffer.write(done.stderr)
    if done.returncode >= 0:  # a signal (a timeout's kill, the OOM killer) says nothing of the input
        keep(entry, out.parent, before, source, done)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
