"""A worker that hangs before its first case: importing this module (the specs, at pytest_configure) never returns
in xdist's first worker, gw0. No item bound covers it; the controller's start bound must (parity.run.watchdog)."""

from __future__ import annotations

import os
import time

from tests import planted

if os.environ.get("PYTEST_XDIST_WORKER") == "gw0":
    time.sleep(300.0)  # outlasts the test's start bound; ends an orphan a killed test run left

SPECS = [planted.correct_add]
