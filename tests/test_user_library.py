"""A module that imports a known library gets that library's adapter, whoever wrote the module.

The control: the same import on cuda-compile without the adapters in force fails as FlagGems does on a
machine without a GPU ("No device were detected"); with them, it imports, and a user's own FlagGems plugin
(tests/user_flag_gems.py) compiles through the cuda-compile suite.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

IMPORT = """
import os
os.environ.pop("GEMS_VENDOR", None)
from parity.backends import get_backend
from parity.spec.context import set_current_backend
backend = get_backend("cuda-compile")
set_current_backend(backend.name)
backend.prepare()
if {adapt}:
    from parity.spec.library import adapt_imports
    adapt_imports()
import flag_gems
print("imported", os.environ.get("GEMS_VENDOR"))
"""


def _python(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PARITY_CACHE_DIR": str(tmp), "TRITON_INTERPRET": "0",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900, check=False)


@pytest.fixture(autouse=True)
def _needs_flag_gems_and_nvidia_backend():
    if importlib.util.find_spec("flag_gems") is None:  # importing it here would need a device
        pytest.skip("flag_gems is not installed: `pip install flag-gems==5.0.2 pyyaml sqlalchemy`")
    pytest.importorskip("triton.backends.nvidia.compiler", reason="needs upstream triton's nvidia backend")


def test_a_known_library_imported_from_any_module_gets_its_adapter(tmp_path):
    control = _python(["-c", IMPORT.format(adapt=False)], tmp_path)
    assert control.returncode != 0 and "No device" in control.stderr, control.stderr[-2000:]  # the failure it fixes
    proc = _python(["-c", IMPORT.format(adapt=True)], tmp_path)
    assert proc.returncode == 0 and "imported nvidia" in proc.stdout, proc.stderr[-3000:]


def test_a_users_own_flag_gems_plugin_compiles_on_cuda_compile(tmp_path):
    proc = _python(["-m", "pytest", "suites/test_compile.py", "--backend=cuda-compile",
                    "--kernels=tests.user_flag_gems", f"--results-dir={tmp_path / 'results'}",
                    "-p", "no:cacheprovider", "-p", "no:xdist", "-q"], tmp_path)
    # pytest's own tally (parity's summary says "xfailed results are ..." on every run)
    assert proc.returncode == 0 and re.search(r"\b\d+ passed\b", proc.stdout) \
        and not re.search(r"\b\d+ failed\b", proc.stdout), (proc.stdout[-3000:], proc.stderr[-2000:])
