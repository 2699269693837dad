"""`--sanitize` on a GPU tier: each accuracy case runs in a fresh process under compute-sanitizer's memcheck.

A kernel whose out-of-bounds accesses land in memory the process owns passes the fp64 check, and nothing
on the device complains. memcheck watches every global access of the child's kernels and names the first
bad ones ("Invalid __global__ read of size 4 bytes ... 1 bytes after the nearest allocation of size 2,800
bytes"). The child runs with torch's caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1): with it
on, a 700-element tail read past a BLOCK of 512 landed inside the allocator's own segment and memcheck
reported 0 errors (measured on an H200, CUDA 13.0); with it off, the read is past an allocation of its own.

A case with memcheck errors fails, whatever its values, and the author owns it (an unmasked tl.load or
tl.store the kernel source shows, where it shows one). The child's record is the case's record; the
parent adds `sanitizer` (and `oob`). Cost: a process and a sanitized launch per case, so it is opt-in.

`python -m parity.run.sanitize ...` is the child's entry (argparse below); the parent builds its command.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from parity import settings
from parity.results import Record, Status, empty_record
from parity.results.files import typed

ERROR_EXIT = 86  # memcheck's exit code when it found errors (--error-exitcode)
PRINT_LIMIT = 20  # errors memcheck prints in full
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*([\d,]+)\s+error")
_ERROR_HEAD = re.compile(r"=+\s+(Invalid __\w+__ (?:read|write|atomic).*|Misaligned .*|Out-of-range .*|"
                         r"Program hit .*|Malloc/Free error.*)")
_DETAIL = re.compile(r"=+\s+(?:at (.+)|(Address .*|.*bytes? (?:before|after) the nearest allocation.*))")


def sanitizer_path() -> str | None:
    """compute-sanitizer on PATH, else under a CUDA toolkit's usual prefixes."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (Path("/usr/local/cuda"), *sorted(Path("/usr/local").glob("cuda-*"), reverse=True)):
        candidate = root / "bin" / "compute-sanitizer"
        if candidate.is_file():
            return str(candidate)
    return None


def missing() -> str | None:
    """Why --sanitize cannot run here, or None."""
    if sanitizer_path() is None:
        return ("--sanitize needs NVIDIA's compute-sanitizer (part of the CUDA toolkit): put its bin/ on PATH, "
                "e.g. `export PATH=/usr/local/cuda/bin:$PATH`")
    return None


def child_env(environ: dict[str, str]) -> dict[str, str]:
    """The child's environment: torch's caching allocator off, so each tensor is an allocation of its own."""
    return {**environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def command(sanitizer: str, *, backend: str, kernels: str, kernel: str, case: str, seed: int, level: str,
            device_index: int, out: Path) -> list[str]:
    return [sanitizer, "--tool", "memcheck", "--error-exitcode", str(ERROR_EXIT), "--print-limit", str(PRINT_LIMIT),
            sys.executable, "-m", "parity.run.sanitize", "--backend", backend, "--kernels", kernels,
            "--kernel", kernel, "--case", case, "--seed", str(seed), "--level", level,
            "--device-index", str(device_index), "--out", str(out)]


def parse_report(output: str) -> dict[str, Any]:
    """memcheck's verdict from its output: the error count (None where it printed no summary) and the first
    errors, each with the kernel it was in and where the address lies."""
    found = _SUMMARY.search(output)
    errors = int(found.group(1).replace(",", "")) if found else None
    first: list[str] = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        head = _ERROR_HEAD.search(line)
        if not head or len(first) >= 5:
            continue
        detail = []
        for follow in lines[i + 1: i + 8]:
            d = _DETAIL.search(follow)
            if d:
                detail.append((d.group(1) or d.group(2)).strip())
        first.append("; ".join([head.group(1).strip(), *detail[:2]]))
    return {"errors": errors, "first": first}


def sanitized_case(spec: Any, case: Any, backend: Any, *, seed: int, level: str,
                   kernels: str) -> tuple[Record, None]:
    """Run one case in a fresh child under memcheck; its record, with `sanitizer` (and a failure on errors)."""
    from parity.run.unmasked import unmasked_accesses

    sanitizer = sanitizer_path()
    with tempfile.TemporaryDirectory(prefix="parity-sanitize-") as tmp:
        out = Path(tmp) / "record.json"
        cmd = command(str(sanitizer), backend=backend.name, kernels=kernels, kernel=spec.name, case=case.id,
                      seed=seed, level=level, device_index=backend.device_index, out=out)
        try:
            done = subprocess.run(cmd, env=child_env(settings.child_env()), capture_output=True, text=True,
                                  timeout=settings.current().sanitize_timeout_s, check=False)
            output, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as exc:
            output, code = str(exc.stdout or "") + str(exc.stderr or ""), None
        record = typed(json.loads(out.read_text())) if out.is_file() else None  # run_case's, as results.jsonl holds it
    report = parse_report(output)
    if record is None:  # the child died before it wrote its record: memcheck's words are what there is
        record = empty_record(backend.name, backend.mode, spec.name, case.id, dict(case.params))
        record.update({"suite": "accuracy", "status": Status.CRASHED if code != ERROR_EXIT else Status.FAILED,
                       "reason": f"the sanitized child wrote no record (exit {code}): "
                                 + " ".join(output.strip().splitlines()[-3:])[:600]})
    record["sanitizer"] = {"tool": "compute-sanitizer memcheck", "errors": report["errors"], "first": report["first"],
                           "exit": code, "command": " ".join(cmd[:8]) + " ... (PYTORCH_NO_CUDA_MEMORY_CACHING=1)",
                           "output_tail": output.strip()[-1500:]}
    if code not in (0, ERROR_EXIT) and not report["errors"] and record["status"] in (Status.PASSED, Status.XPASSED):
        # the child wrote a passing record, then its process did not end cleanly under memcheck: a pass is never
        # kept on the word of a process that died (on the H200, two unmasked-tail kernels exited 11 this way
        # with memcheck's summary at 0 errors, while their masked twin exited 0)
        how = "timed out" if code is None else (f"was killed by signal {-code}" if code < 0 else f"exited {code}")
        record["status"] = Status.CRASHED
        record["reason"] = (f"under compute-sanitizer memcheck the case's process {how} after recording a pass "
                            f"(memcheck counted {report['errors']} error(s)); a crash or a hang is never a pass: "
                            "an out-of-bounds access is the usual cause, see AUTHOR.md")
    if report["errors"]:
        lines = unmasked_accesses(spec.kernel, "load") + unmasked_accesses(spec.kernel, "store")
        record["oob"] = {"tool": "compute-sanitizer memcheck", "errors": report["errors"], "unmasked": lines}
        words = (f"compute-sanitizer memcheck: {report['errors']} invalid memory access(es)"
                 + (f": {report['first'][0]}" if report["first"] else "")
                 + (f"; unmasked: {' | '.join(lines)}" if lines else ""))
        if record["status"] in (Status.PASSED, Status.XPASSED):
            record["status"] = Status.FAILED  # its values were right only because the stray accesses landed harmlessly
            record["reason"] = words
        else:
            record["reason"] = f"{words}; then: {record.get('reason')}"
    return record, None


def main(argv: list[str] | None = None) -> int:
    """The child: one case of one spec, its record as JSON at --out."""
    parser = argparse.ArgumentParser(prog="python -m parity.run.sanitize", description=__doc__.splitlines()[0])
    for name in ("backend", "kernels", "kernel", "case", "level", "out"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device-index", type=int, default=0)
    args = parser.parse_args(argv)
    from parity.backends import get_backend
    from parity.paths import triton_cache_dir
    from parity.results.files import plain
    from parity.run.refcache import ReferenceCache
    from parity.run.runner import run_case
    from parity.seams.env import point_triton_at  # with the line above: this child's own setup
    from parity.spec import registry, validate_cases
    from parity.spec.context import set_current_backend

    backend = get_backend(args.backend)
    set_current_backend(backend.name)
    point_triton_at(triton_cache_dir(backend.name))  # the binaries the worker compiled: no compile here
    backend.prepare()
    backend.device_index = args.device_index
    backend.select_device(args.device_index)
    _, specs = registry.build([k.strip() for k in args.kernels.split(",")])
    spec = next((s for s in specs if s.name == args.kernel), None)
    if spec is None:
        raise SystemExit(f"no spec named {args.kernel!r} under --kernels {args.kernels!r}")
    case = next((c for c in validate_cases(spec, args.level) if c.id == args.case), None)
    if case is None:
        raise SystemExit(f"{args.kernel}: no case {args.case!r} at level {args.level}")
    record, _ = run_case(spec, case, backend, seed=args.seed, cache=ReferenceCache())
    Path(args.out).write_text(json.dumps(plain(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
