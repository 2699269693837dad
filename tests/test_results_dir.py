"""A results dir that cannot be made is one clear usage error naming what is in the way, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from parity.run import rundir
from tests.tier_python import ROOT


def test_a_file_on_the_results_dirs_path_is_named(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("")
    assert "lies under" in rundir.unusable(blocker / "sub") and str(blocker) in rundir.unusable(blocker / "sub" / "x")
    assert "is a file" in rundir.unusable(blocker)
    # controls: a dir that exists, or one to create under a dir, is fine
    assert rundir.unusable(tmp_path) is None and rundir.unusable(tmp_path / "new" / "deeper") is None


def test_a_results_dir_under_a_file_stops_the_run_with_one_line_and_no_internalerror(tmp_path):
    blocker = tmp_path / "results"
    blocker.write_text("")
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "--backend=interpret", "--kernels=vector_add",
                           f"--results-dir={blocker / 'sub'}", "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=300,
                          check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 4 and "which is a file" in output and "INTERNALERROR" not in output, output[-2000:]
