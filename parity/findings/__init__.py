"""Findings' floor: what a failing record's Finding is made of (Finding, Draft, Tracker) and the markdown and env.json
facts every draft and report renders it with; below fit, triage, report and repro, so drafts never borrow the report's
helpers (parity.triage.drafts.finding_of computes each Finding once)."""
