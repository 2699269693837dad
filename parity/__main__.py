"""`python -m parity record -- CMD`, `python -m parity report`: the `parity` command (parity.cli)."""

import sys

from parity.cli import main

sys.exit(main())
