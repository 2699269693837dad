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


# Libraries that are not on the package index and are loaded from a source snapshot (PYTHONPATH): the
# commit of the snapshot the specs were checked against, by import name. A snapshot copied without its
# .git has no other record of where it came from, so the spec module stamps this on the stand-in package
# it registers (`__version__ = "snapshot <commit>"`); parity's issue drafts name it when neither version
# metadata nor a git checkout says better (parity.triage.library_rule.library_version).
SNAPSHOTS: dict[str, str] = {
    "mojo_opset": "b97e98bff029ef568ec43f41439ff76171bea735",  # XPU-Forces/mojo_opset, 2026-08-06
    "gdn_tri_inverse": "d12ad04225adce2e7a43d793cae74458ed56f938",  # huawei-csl/gdn-tri-inverse, 2026-04-15
    "fa_test": "5d8e928f5f54bd12b72fe613bee0ebde8f553012",  # hongziqi/fa-test, 2025-09-25
    "lightllm": "fc72ffab9a3455cfb571f22d45ab777cc29de0de",  # ModelTC/lightllm, 2025-07-11 (PARITY_LIGHTLLM)
    # vllm-project/vllm-ascend, 2026-08-22 (PARITY_VLLM_ASCEND)
    "vllm_ascend": "182b75ea84ff13ece27b57391331ef8935410aea",
}


def snapshot_version(package: str) -> str | None:
    """`snapshot <commit>` for a package of SNAPSHOTS, the label its stand-in module carries."""
    commit = SNAPSHOTS.get(package)
    return f"snapshot {commit}" if commit else None
