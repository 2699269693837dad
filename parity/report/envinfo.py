"""env.json's facts: parity.findings.envinfo, which a vendor draft's environment block shares (re-exported)."""

from parity.findings.envinfo import collect, git_commit

__all__ = ["collect", "git_commit"]
