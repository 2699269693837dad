"""The interpreter's tier limits' probes: each a tiny kernel run under TRITON_INTERPRET=1 in a child process, printing
1 while the defect is there and 0 once a release fixes it (parity.triage.limits retires the entry then)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from parity import settings
from parity.paths import cache_root

PROBE_TIMEOUT_S = 120.0


_INTERPRETER_PROBES = {
    # each prints 1 while the defect is there, 0 once fixed
    "interpret-int-to-bf16": """
@triton.jit
def k(x, y):
    o = tl.arange(0, 4)
    tl.store(y + o, tl.load(x + o).to(tl.bfloat16))
x = torch.arange(1, 5, dtype=torch.int32); y = torch.zeros(4, dtype=torch.bfloat16)
k[(1,)](x, y)
print(int(y.float().tolist() != [1.0, 2.0, 3.0, 4.0]))
""",
    "interpret-bf16-arith": """
@triton.jit
def k(x, y):
    o = tl.arange(0, 4)
    v = tl.load(x + o)
    tl.store(y + o, -(v + v))
x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.bfloat16); y = torch.zeros(4, dtype=torch.bfloat16)
k[(1,)](x, y)
print(int(y.float().tolist() != [-2.0, -4.0, -6.0, -8.0]))
""",
    "interpret-bf16-dot": """
@triton.jit
def k(a, c):
    r = tl.arange(0, 16)
    t = tl.load(a + r[:, None] * 16 + r[None, :])
    tl.store(c + r[:, None] * 16 + r[None, :], tl.dot(t, t))
a = torch.ones(16, 16, dtype=torch.bfloat16); c = torch.zeros(16, 16, dtype=torch.float32)
k[(1,)](a, c)
print(int(not bool((c == 16).all())))
""",
    "interpret-float-arg": """
@triton.jit
def k(y, s):
    o = tl.arange(0, 4)
    tl.store(y + o, tl.zeros([4], tl.float32) + s.to(tl.float32))
y = torch.zeros(4)
try:
    k[(1,)](y, 2.5)
    print(int(y.tolist() != [2.5] * 4))
except Exception:
    print(1)
""",
    "interpret-loop-var": """
@triton.jit
def k(y, n):
    for i in range(n):
        tl.store(y + i, i.to(tl.float32))
y = torch.zeros(4)
try:
    k[(1,)](y, 4)
    print(int(y.tolist() != [0.0, 1.0, 2.0, 3.0]))
except Exception:
    print(1)
""",
    "interpret-constexpr-arg": """
@triton.jit
def bits(dtype):
    d = dtype.value
    w: tl.constexpr = d.primitive_bitwidth
    return w
@triton.jit
def k(x, y):
    o = tl.arange(0, 4)
    tl.store(y + o, tl.zeros([4], tl.int32) + bits(x.type.element_ty))
x = torch.zeros(4); y = torch.zeros(4, dtype=torch.int32)
try:
    k[(1,)](x, y)
    print(int(y.tolist() != [32] * 4))
except Exception:
    print(1)
""",
    "interpret-libdevice": """
from triton.language.extra import libdevice
@triton.jit
def k(x, y):
    o = tl.arange(0, 4)
    tl.store(y + o, libdevice.expm1(tl.load(x + o)))
x = torch.zeros(4); y = torch.ones(4)
try:
    k[(1,)](x, y)
    print(int(y.tolist() != [0.0] * 4))
except Exception:
    print(1)
""",
}


def _interpreter_probe(limit_id: str) -> Callable[[], bool | None]:
    def probe() -> bool | None:
        if sys.modules.get("triton") is not None and _is_triton_ascend():
            return None  # triton-ascend's process: the upstream interpreter is not here to ask
        folder = cache_root() / "triage-probes"
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / f"{limit_id.replace('-', '_')}.py"
        script.write_text("import torch\nimport triton\nimport triton.language as tl\n"
                          + _INTERPRETER_PROBES[limit_id], encoding="utf-8")
        env = {**settings.child_env(), "TRITON_INTERPRET": "1"}
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                              timeout=PROBE_TIMEOUT_S, check=False)
        last = (done.stdout.strip().splitlines() or [""])[-1]
        return {"1": True, "0": False}.get(last)
    return probe


def _is_triton_ascend() -> bool:
    import importlib.metadata

    try:
        importlib.metadata.version("triton-ascend")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True
