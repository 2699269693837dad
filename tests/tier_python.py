"""The python of another tier's nox venv, found the same way on every machine."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tier_python(session: str) -> Path:
    """PARITY_<SESSION>_PYTHON if set, else the venv `nox -s <session>` creates under .nox/."""
    override = os.environ.get(f"PARITY_{session.upper().replace('-', '_')}_PYTHON")
    return Path(override) if override else ROOT / ".nox" / session / "bin" / "python"
