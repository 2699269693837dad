"""`python -m parity.cli`: the same commands as `python -m parity`."""

from parity.cli import main

raise SystemExit(main())
