"""`nox -s clean`: remove parity's venvs (.nox/) and its cache dir (parity.paths.cache_root), after saying how much
each holds; reports/ only when asked (`-- --reports`), and its README.md never. Imports no torch: nox's own python
runs it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from parity.paths import cache_root

REPO = Path(__file__).resolve().parents[2]
KEEP_IN_REPORTS = ("README.md",)  # tracked: reports/ is otherwise generated output


def size_bytes(path: Path) -> int:
    """Bytes of the files under `path` (links not followed, so a venv's link to its python counts once)."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_size
            except OSError:
                continue
    return total


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def unsafe(path: Path, repo: Path) -> str | None:
    """Why a cache dir must not be removed wholesale (a PARITY_CACHE_DIR pointed at home, /, or the clone)."""
    resolved, clone = path.resolve(), repo.resolve()
    if resolved == Path.home().resolve() or resolved == clone or resolved in clone.parents:
        return f"{path} is the file system's root, your home dir, or the clone or a folder above it"
    return None


def targets(repo: Path, reports: bool) -> list[Path]:
    found = [repo / ".nox", cache_root()]
    if reports:
        found += sorted(p for p in (repo / "reports").glob("*") if p.name not in KEEP_IN_REPORTS)
    return [p for p in found if p.exists() or p.is_symlink()]


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def main(argv: Sequence[str] | None = None, repo: Path = REPO) -> int:
    parser = argparse.ArgumentParser(prog="nox -s clean --", description=__doc__)
    parser.add_argument("--reports", action="store_true", help="also remove everything under reports/ but README.md")
    parser.add_argument("--dry-run", action="store_true", help="say what would go, remove nothing")
    args = parser.parse_args(argv)
    cache = cache_root()
    problem = unsafe(cache, repo)
    if problem:
        print(f"clean: refusing to remove the cache dir: {problem}; unset PARITY_CACHE_DIR or point it at a folder "
              "of parity's own", file=sys.stderr)
        return 2
    found = targets(repo, args.reports)
    if not found:
        print("clean: nothing to remove (no .nox/, no parity cache" + ("" if args.reports else
              "; reports/ is kept unless you pass --reports") + ")")
        return 0
    sizes = {p: size_bytes(p) for p in found}
    for path, n in sizes.items():
        print(f"clean: {'would remove' if args.dry_run else 'removing'} {path} ({human(n)})")
    if not args.dry_run:
        for path in found:
            remove(path)
    verb = "would free" if args.dry_run else "freed"
    kept = "" if args.reports else "; reports/ kept (`nox -s clean -- --reports` removes it too)"
    print(f"clean: {verb} {human(sum(sizes.values()))}{kept}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
