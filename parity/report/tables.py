"""Markdown cells and GFM tables: parity.findings.markdown, which the drafts share (re-exported for the report)."""

from parity.findings.markdown import fmt_num, md_code, md_escape, table

__all__ = ["fmt_num", "md_code", "md_escape", "table"]
