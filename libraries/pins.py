"""The library versions the specs were written against: one table, read by noxfile.py and by libraries/*.py.

Plain data with no torch import, so noxfile.py can read it before any venv exists. The library itself
installs with `--no-deps`: liger-kernel requires `triton`, which pip would install over triton-ascend,
and flag-gems pins numpy and packaging exactly; its runtime imports are listed in `deps` instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pin:
    package: str  # the import name, e.g. "fla"
    dist: str  # the pinned distribution, e.g. "fla-core==0.6.0"; installed with --no-deps
    deps: tuple[str, ...] = ()  # what it imports beyond torch and triton, installed normally

    def pip_command(self) -> str:
        """What a user types to install it into a tier's venv."""
        deps = f" && pip install {' '.join(self.deps)}" if self.deps else ""
        return f"pip install --no-deps {self.dist}{deps}"


# key: the name users pass in PARITY_LIBRARIES (= the spec module's name under libraries/)
PINS: dict[str, Pin] = {
    "fla": Pin("fla", "fla-core==0.6.0", ("einops",)),
    "liger": Pin("liger_kernel", "liger-kernel==0.8.5"),
    "flag_gems": Pin("flag_gems", "flag-gems==5.0.2", ("pyyaml", "sqlalchemy")),
}


def module(name: str) -> str:
    """libraries.<name>, the spec module of PINS[name]."""
    return f"libraries.{name}"


def select(names: str) -> list[str]:
    """PARITY_LIBRARIES ("fla,liger" or "all") -> the PINS keys, checked; errors list the valid names."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if wanted == ["all"]:
        return list(PINS)
    unknown = [n for n in wanted if n not in PINS]
    if unknown:
        raise ValueError(f"unknown librar{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}: "
                         f"PARITY_LIBRARIES takes a comma-separated list of {', '.join(PINS)}, or 'all'")
    return wanted
