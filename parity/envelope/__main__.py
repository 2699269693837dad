"""`python -m parity.envelope TARGET ...`: one target's envelope, run in that target's venv."""

import sys

from parity.envelope.tier import main

sys.exit(main())
