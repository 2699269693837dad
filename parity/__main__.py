"""The `parity` command (pyproject's [project.scripts]) and `python -m parity`: `parity record -- CMD`,
`parity check NAMES`, `parity report`, `parity replay-summary`, `parity merge` (parity.cli).

`record` goes straight to parity.record.command, which imports neither torch nor the report stack: the recorded
command should not wait for them, and the python that runs a user's code may lack the report's packages."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["record"]:
        from parity.record.command import main as record  # lazy: see the module's docstring

        return record(args[1:])
    from parity.cli import main as cli  # lazy: only when not recording

    return cli(args)


if __name__ == "__main__":
    sys.exit(main())
