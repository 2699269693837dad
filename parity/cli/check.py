"""`parity check NAMES` (and `nox -s check -- --kernels NAMES`): one kernel module through every hardware-free tier
this machine can run, each into reports/check-<name>/<tier>, then that folder's own DIVERGENCE.md and the verdict.

Each tier's pytest runs with that tier's python (the nox venv its Backend names); a tier whose venv or host tools are
missing is an honest skip that names the command providing them.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from parity import settings
from parity.backends import Backend, registered
from parity.reasons import key_line
from parity.results import dirs as rd

REPO = Path(__file__).resolve().parents[2]
CREATE_HINT = "create the tiers' venvs with `nox -s venv-upstream venv-ascend` (or `nox -s check -- --kernels ...`)"


def hardware_free() -> dict[str, type[Backend]]:
    """The tiers `check` runs, in the backends' order: those a nox stack venv holds (every one with no device)."""
    return {cls.name: cls for cls in registered() if cls.venv}


def venv_python(repo: Path, venv: str) -> Path:
    return repo / ".nox" / venv / "bin" / "python"


def python_for(tier: type[Backend], repo: Path) -> tuple[str | None, str]:
    """The python that runs `tier` here, or None and why not (naming the command that fixes it)."""
    missing = tier.host_missing()
    if missing:
        return None, missing
    stack = tier.venv or tier.name
    for venv in (stack, tier.name):  # a tier's own venv from before the stacks were shared still serves
        python = venv_python(repo, venv)
        if python.exists():
            return str(python), ""
    needs = f" ({tier.venv_note})" if tier.venv_note else ""
    return None, f"{NO_VENV} {repo / '.nox' / stack}; create it with `nox -s {stack}`{needs}"


NO_VENV = "no venv"  # the start of python_for's reason when the venv itself is what is missing
# pytest's exit codes: 0 all passed, 1 some failed (a verdict, not a broken check), 4 a usage error (a misspelt
# --kernels, the same on every tier: the check stops there), 5 nothing collected
PYTEST_DONE = (0, 1)
PYTEST_USAGE = 4


@dataclass(frozen=True)
class Target:
    """What the user named, as the children import it: a dotted module (or kernel name) and the folder to put on
    their PYTHONPATH (None when it imports from the clone as it is)."""

    name: str
    root: Path | None


def package_root(path: Path) -> tuple[Path, str]:
    """The folder to import `path` (a .py file) from, and its dotted name: up through every package folder."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def resolve(item: str, cwd: Path, repo: Path = REPO) -> Target:
    """A --kernels item as the tier children take it; a path (anywhere) becomes a module with its root."""
    if not (item.endswith(".py") or "/" in item or os.sep in item):
        return Target(item, None)
    path = (cwd / item).resolve()
    if path.is_dir() and (path / "__init__.py").exists():
        path = path / "__init__.py"
    if not path.is_file():
        near = difflib.get_close_matches(path.name, [p.name for p in path.parent.glob("*.py")], n=3)
        hint = f"did you mean {' or '.join(repr(str(path.parent / n)) for n in near)}? " if near else ""
        raise SystemExit(f"parity check: {item}: no such file ({path}); {hint}pass a kernel module's .py file, "
                         "a dotted module name, or a kernel name")
    root, dotted = package_root(path)
    if dotted.endswith(".__init__"):
        dotted = dotted[: -len(".__init__")]
    return Target(dotted, None if root == repo else root)


def slug(items: Sequence[str]) -> str:
    """The folder name for a check of these items: each one's last part (l2norm for examples.user_kernels.l2norm)."""
    parts = []
    for item in items:
        stem = Path(item).stem if item.endswith(".py") else item.rstrip("/").replace("/", ".").rpartition(".")[2]
        parts.append(re.sub(r"[^\w.-]", "_", stem) or "kernels")
    return "+".join(dict.fromkeys(parts))


def child_env(targets: Sequence[Target], base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """The tier child's environment: the targets' roots on PYTHONPATH (the one place they are put there)."""
    roots = list(dict.fromkeys(str(t.root) for t in targets if t.root is not None))
    env = {**base, **extra}
    if roots:
        env["PYTHONPATH"] = os.pathsep.join([*roots, *([base["PYTHONPATH"]] if base.get("PYTHONPATH") else [])])
    return env


def pytest_command(python: str, tier: str, names: Sequence[str], results_dir: Path, extra: Sequence[str]) -> list[str]:
    return [python, "-m", "pytest", "suites", f"--backend={tier}", f"--kernels={','.join(names)}",
            f"--results-dir={results_dir}", "--timeout=900", "-n", "2", *extra]


# what became of one tier's check
State = Literal["ran", "skipped", "broke"]
RAN: Final = "ran"  # its pytest gave a verdict (some cases may have failed: the detail says)
SKIPPED: Final = "skipped"  # not run here (no venv, a host tool missing): the detail says why
BROKE: Final = "broke"  # its pytest ran but gave no verdict


@dataclass
class Outcome:
    tier: str
    state: State
    detail: str
    seconds: float = 0.0
    usage: bool = False  # pytest refused the arguments (a misspelt name): every tier would refuse them alike


def venv_env(python: str) -> dict[str, str]:
    """A venv's bin/ first on PATH (bishengir-compile lives there), as its activation would."""
    bin_dir = os.path.dirname(python)
    path = os.environ.get("PATH", "")  # the shell's own, which the venv's bin/ goes in front of
    return {"PATH": os.pathsep.join([bin_dir, path]), "VIRTUAL_ENV": os.path.dirname(bin_dir)}


def run_tier(tier: type[Backend], python: str, targets: Sequence[Target], out: Path,
             extra: Sequence[str]) -> Outcome:
    started = time.monotonic()
    command = pytest_command(python, tier.name, [t.name for t in targets], out / tier.name, extra)
    print(f"\nparity check: {tier.name} ({python})", flush=True)
    env = child_env(targets, settings.child_env(), {**venv_env(python), **tier.process_env})
    code = subprocess.call(command, cwd=REPO, env=env)
    tier_name = tier.name
    seconds = time.monotonic() - started
    if code in PYTEST_DONE:
        return Outcome(tier_name, RAN, "all passed" if code == 0 else "some cases failed (see the verdict)", seconds)
    cause = first_error(collect_output(python, tier.name, targets, out, extra, env))
    if code == PYTEST_USAGE:
        return Outcome(tier_name, BROKE, f"{cause or 'pytest refused its arguments (above)'}; fix the names and "
                       "run again", seconds, usage=True)
    said = f": {cause}" if cause else " (see its output above; collecting its cases alone raised nothing)"
    return Outcome(tier_name, BROKE, f"pytest exited {code}{said}", seconds)


def collect_output(python: str, tier: str, targets: Sequence[Target], out: Path, extra: Sequence[str],
                   env: dict[str, str]) -> str:
    """What the tier's pytest says when it only collects (a misspelt name, an import error): the broken run's own
    output went to the terminal as it came, its live line intact, so its cause is read from a quiet re-collect."""
    command = [*pytest_command(python, tier, [t.name for t in targets], out / tier, extra), "--collect-only", "-q",
               "-p", "no:cacheprovider"]
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    return proc.stdout + proc.stderr if proc.returncode not in PYTEST_DONE else ""


# pytest's own refusal ("ERROR: unknown kernel ..."), up to the end of its "did you mean ...?" when it has one
_PYTEST_ERROR = re.compile(r"^ERROR:\s*(?P<what>.+?(?:did you mean [^?]*\?|$))", re.M)


def first_error(output: str) -> str:
    """The line of a tier's output that says what broke, '' when it says nothing."""
    found = _PYTEST_ERROR.search(output)
    return found["what"].strip() if found else key_line(output)[:300] if output.strip() else ""


def report(python: str, folder: Path, ran: Sequence[str]) -> tuple[int, str]:
    """DIVERGENCE.md of this check's folder only (the full run's reports/DIVERGENCE.md is left alone), over the
    tiers that ran now (an earlier check's tier dir there is not this run's evidence)."""
    dirs = [str(folder / t) for t in ran if (folder / t / rd.RESULTS).exists()]
    if not dirs:
        return 1, f"parity check: no tier wrote results under {folder}; nothing to report"
    proc = subprocess.run([python, "-m", "parity.cli", "report", *dirs, "--out", str(folder / "DIVERGENCE.md")],
                          cwd=REPO, capture_output=True, text=True)
    return proc.returncode, (proc.stdout + proc.stderr).rstrip()


def summary(outcomes: Sequence[Outcome]) -> str:
    width = max(len(o.tier) for o in outcomes)
    lines = ["parity check: tiers"]
    for o in outcomes:
        took = f" in {o.seconds:.0f} s" if o.seconds else ""
        lines.append(f"  {o.tier:<{width}}  {o.state}{took}: {o.detail}")
    return "\n".join(lines)


def parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="parity check", description="one kernel module through every hardware-free tier here, then its verdict; "
        "arguments it does not know go to each tier's pytest (e.g. --level full)")
    parser.add_argument("names", nargs="*",
                        help="kernel names, families, dotted modules, .py paths (anywhere) or MODULE:NAME")
    parser.add_argument("--kernels", default="", help="the same, comma-separated (as the tiers take them)")
    names = ",".join(hardware_free())
    parser.add_argument("--tiers", default=names, help=f"which tiers (default: {names})")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="check-<name>/ goes under it")
    args, extra = parser.parse_known_args(argv)
    items = [i for chunk in [*args.names, args.kernels] for i in chunk.split(",") if i]
    if not items:
        parser.error("name what to check: `parity check examples.user_kernels.l2norm` "
                     "(or `nox -s check -- --kernels examples.user_kernels.l2norm`)")
    args.items = items
    unknown = [t for t in args.tiers.split(",") if t not in hardware_free()]
    if unknown:
        parser.error(f"--tiers: unknown {', '.join(unknown)}; the hardware-free tiers are {names}")
    return args, extra


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = parse(list(sys.argv[1:] if argv is None else argv))
    cwd = Path.cwd()
    targets = [resolve(i, cwd) for i in args.items]
    out = (cwd / args.out).resolve() / f"check-{slug(args.items)}"
    out.mkdir(parents=True, exist_ok=True)
    outcomes: list[Outcome] = []
    tiers = hardware_free()
    for name in args.tiers.split(","):
        python, why = python_for(tiers[name], REPO)
        if python is None:
            outcomes.append(Outcome(name, SKIPPED, why))
            print(f"\nparity check: {name} skipped: {why}", flush=True)
            continue
        tier = tiers[name]
        outcome = run_tier(tier, python, targets, out, extra)
        outcomes.append(outcome)
        if outcome.usage:
            break  # the same names fail the same way on every tier
    print("\n" + summary(outcomes), flush=True)
    ran = [o.tier for o in outcomes if o.state == RAN]
    if not ran:
        print(f"parity check: no tier ran, so no verdict: {closing(outcomes)}", file=sys.stderr)
        return 2
    code, text = report(sys.executable, out, ran)
    print(text)  # the verdict
    broke = [o for o in outcomes if o.state == BROKE]
    if broke:  # the last line names what broke, so the verdict above is not read as covering it
        print(f"parity check: the verdict covers {', '.join(ran)} only: {closing(broke)}", file=sys.stderr)
    failed = any(o.state == RAN and o.detail != "all passed" for o in outcomes)
    return 2 if broke or code else 1 if failed else 0


def closing(outcomes: Sequence[Outcome]) -> str:
    """Why tiers gave no verdict, as the last line says it: the tier that broke and its first error line, else
    every skip's reason; building the venvs is suggested only where a venv is what is missing."""
    broke = [o for o in outcomes if o.state == BROKE]
    if broke:
        return "; ".join(f"{o.tier} broke: {o.detail}" for o in broke)
    skipped = [o for o in outcomes if o.state == SKIPPED]
    no_venv = [o.tier for o in skipped if o.detail.startswith(NO_VENV)]
    other = [f"{o.tier}: {o.detail}" for o in skipped if o.tier not in no_venv]
    if no_venv:
        other.append(f"{', '.join(no_venv)} ha{'s' if len(no_venv) == 1 else 've'} no venv; {CREATE_HINT}")
    return "; ".join(other) or "no tier was asked for"


if __name__ == "__main__":
    sys.exit(main())
