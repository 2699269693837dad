"""`parity record [--out DIR] [--keep N] [--budget SIZE] -- CMD ...`: run a command with every Triton
launch recorded into a bundle (parity.record.bundle), with no change to the command's code."""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import os
import platform
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from parity import settings
from parity.record import bundle as fmt

SITE_DIR = Path(__file__).resolve().parent / "site"
PARITY_ROOT = Path(__file__).resolve().parents[2]
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(value: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", value.lower())
    if not m:
        raise argparse.ArgumentTypeError(f"--budget takes a size such as 2G, 500M or 1000000, got {value!r}")
    return int(float(m.group(1)) * UNITS[m.group(2)])


def parse_keep(value: str) -> int:
    try:
        keep = int(value)
    except ValueError:
        keep = 0
    if keep < 1:
        raise argparse.ArgumentTypeError(f"--keep takes a whole number >= 1 (launches kept per key), got {value!r}")
    return keep


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("reports") / "record",
                        help="the bundle directory to write (default reports/record)")
    parser.add_argument("--keep", type=parse_keep, default=2,
                        help="launches kept per (kernel, specialization, shapes, dtypes); the rest are counted "
                             "(default 2)")
    parser.add_argument("--budget", type=parse_size, default=2 << 30,
                        help="stop keeping launches when the bundle's tensors reach this size (default 2G)")
    parser.add_argument("--allow-parity-conftest", action="store_true",
                        help="record a pytest command even where it loads parity's own conftest and plugin")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD",
                        help="the command to run, after --, e.g. -- python -m pytest tests/x.py")


def host_versions() -> dict[str, Any]:
    """Versions of the recording host, read from package metadata (nothing is imported)."""
    env: dict[str, Any] = {"python": platform.python_version(), "platform": platform.platform()}
    # the kernels' own libraries are named per kernel (its module's distribution, in each launch line)
    for name in ("torch", "triton", "triton-ascend", "torch_npu"):
        try:
            env[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return env


PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def runs_pytest(command: Sequence[str]) -> bool:
    names = [Path(c).name for c in command]
    return any(n in ("pytest", "py.test") for n in names) or any(
        a == "-m" and b == "pytest" for a, b in itertools.pairwise(command))


def parity_conftest_clash(command: Sequence[str], cwd: Path) -> str | None:
    """Why a pytest command run from `cwd` would load parity's own conftest (and so its plugin, which runs
    every launch under the interpreter), else None: the nearest pytest config above cwd is parity's."""
    if not runs_pytest(command):
        return None
    here = cwd.resolve()
    if here != PARITY_ROOT and PARITY_ROOT not in here.parents:
        return None
    for d in (here, *here.parents):
        if d == PARITY_ROOT:
            break
        if any((d / name).is_file() for name in PYTEST_CONFIGS):
            return None  # the workload's own config makes its directory pytest's rootdir
    return (f"the command runs pytest from {here}, inside the parity checkout {PARITY_ROOT} with no pytest config "
            "of its own, so pytest takes parity's pyproject as rootdir and loads parity's conftest and plugin "
            "(backend interpret, TRITON_INTERPRET=1): the launches would run under the interpreter, not on the "
            "device. Run it from the workload's own checkout outside parity (or give that directory a pytest.ini), "
            "or pass --allow-parity-conftest to record it anyway")


def run(args: argparse.Namespace) -> int:
    command = list(args.cmd)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("parity record: no command given; run e.g. `parity record --out B -- python -m pytest tests/x.py`",
              file=sys.stderr)
        return 2
    clash = parity_conftest_clash(command, Path.cwd())
    if clash and not args.allow_parity_conftest:
        print(f"parity record: refused: {clash}", file=sys.stderr)
        return 2
    out: Path = args.out
    if out.exists() and any(out.iterdir()):
        print(f"parity record: {out} exists and is not empty; pass a new --out directory (a bundle is never "
              "appended to, so its launches come from one command)", file=sys.stderr)
        return 2
    fmt.write_header(out, command, {"keep": args.keep, "budget_bytes": args.budget}, host_versions())
    recording = replace(settings.current(), record_dir=out.resolve(), record_keep=args.keep, record_budget=args.budget)
    env = settings.child_env(settings=recording)
    env["PYTHONPATH"] = os.pathsep.join([str(SITE_DIR), str(PARITY_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    try:
        proc = subprocess.Popen(command, env=env)
    except OSError as exc:
        print(f"parity record: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:  # the command got the Ctrl-C too: wait for it to write its last lines
            proc.send_signal(signal.SIGINT)
    print(summary_line(out, code), file=sys.stderr)
    return code


def summary_line(out: Path, code: int) -> str:
    try:  # no manifest: the recorder was never installed, no process got as far as Triton
        b = fmt.load_bundle(out) if any(out.glob(fmt.MANIFEST_GLOB)) else None
    except fmt.BundleError as exc:
        return f"parity record: the bundle cannot be read back: {exc}"
    if b is None or (not b.processes and not b.launches):
        return (f"parity record: nothing was recorded in {out}: no process of the command imported Triton with the "
                f"recorder (command exit status {code}). If the command failed, its own output above says why "
                "(e.g. an import error in a conftest); fix that and record again into a new --out.")
    dropped = sum(b.dropped().values())
    kernels = {e["kernel"].get("id") for e in b.launches}
    stopped = [c["stopped"] for c in b.counts if c.get("stopped")]
    from parity.record.summary import recorded_under

    return (f"parity record: {recorded_under(b)}\n"
            f"parity record: {len(b.launches)} launch(es) of {len(kernels)} kernel(s) kept in {out}, "
            f"{dropped} more counted (dedupe), {len(b.unrecorded)} not recordable; command exit status {code}"
            + (f"; stopped keeping: {stopped[0]}" if stopped else "")
            + f"\nreplay: nox -s interpret -- --replay {out}  (or cuda-compile, ascend-compile, ascend-lowered)")


def main(argv: Sequence[str] | None = None) -> int:
    """The `parity-record` console script."""
    parser = argparse.ArgumentParser(prog="parity record", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
