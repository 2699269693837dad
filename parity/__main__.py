"""`python -m parity record -- CMD`, `python -m parity report`: the `parity` command (parity.cli).

`record` goes straight to parity.record.command, which imports neither torch nor the report stack: the
recorded command should not wait for them."""

import sys

if sys.argv[1:2] == ["record"]:
    from parity.record.command import main as record

    sys.exit(record(sys.argv[2:]))

from parity.cli import main  # only when not recording

sys.exit(main())
