"""Who must act on a failing case: the typed owner a record carries in memory (results.jsonl holds `as_json()`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from parity.results.kinds import OwnerKind


@dataclass(frozen=True, eq=False)
class Owner:
    """Who must act on a failing case, and on what evidence (results.jsonl holds `as_json()`, read back by
    `from_json`)."""

    who: OwnerKind
    name: str  # e.g. "FlagGems", "Triton interpreter", "ascend-lowered host toolchain"
    evidence: str  # one line
    provisional: bool = False
    settle: str | None = None  # the run that would settle a provisional owner
    limit: str | None = None  # the tier-limit id (parity.triage.limits)
    also: tuple[str, ...] = ()  # other trackers that must get a draft (usually none)

    def __post_init__(self) -> None:
        object.__setattr__(self, "who", OwnerKind(self.who))  # a plain word is checked: ValueError names it
        object.__setattr__(self, "also", tuple(self.also))

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "who": self.who.value, "also": list(self.also)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Owner:
        """The owner a results line holds (parity.results.files reads it so); a missing optional key is its default."""
        return cls(OwnerKind(data["who"]), str(data["name"]), str(data["evidence"]), bool(data.get("provisional")),
                   data.get("settle"), data.get("limit"), tuple(data.get("also") or ()))
