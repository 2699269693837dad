"""Who owns a failing case: decided from every tier's record of it, the tier limits and the kernel source.

The verdict is `record["owner"]` (shape in decide.make_owner); the drafts a repro folder gets follow it
(parity.triage.drafts). Nothing here may lose a record: `triage_record` never raises.
"""

from __future__ import annotations

from parity.triage.decide import decide, make_owner
from parity.triage.drafts import DraftPlan, plan_drafts
from parity.triage.wire import settle_interrupted, triage_record

__all__ = ["DraftPlan", "decide", "make_owner", "plan_drafts", "settle_interrupted", "triage_record"]
