"""Findings: what a failing record asks of whom (its owner's draft, tracker and words), computed once per record
and read by the repro's drafts and the reports alike; with the markdown and fit-advice text both render."""
