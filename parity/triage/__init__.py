"""Who owns a failing case: decided once per record, from the evidence of its case, the tier limits and its code.

The stage is parity.triage.stage.triage (the run) and parity.triage.merged.annotate (the report, over the
merged view, writing no results dir). The verdict is `record["owner"]` (shape in owner.make_owner); every
rule over it lives here (parity.triage.owner, the drafts it calls for in parity.triage.drafts). Nothing here
may lose a record: the stage never raises.
"""

from __future__ import annotations

from parity.triage.decide import decide
from parity.triage.drafts import DraftPlan, plan_drafts
from parity.triage.interrupt import settle_interrupted
from parity.triage.owner import make_owner
from parity.triage.stage import CaseCode, Evidence, NoEvidence, RunEvidence, triage

__all__ = ["CaseCode", "DraftPlan", "Evidence", "NoEvidence", "RunEvidence", "decide", "make_owner", "plan_drafts",
           "settle_interrupted", "triage"]
