"""A random kernel whose stream differs by compiler but whose distribution agrees is owner "random" (not a bug, no
vendor draft, not the author's); a dropout whose keep probability is wrong still fails as before."""

import torch

from parity.run.distribution import compare
from parity.triage.decide import decide
from parity.triage.drafts import plan_drafts
from parity.triage.stage import CaseCode, triage

DROPOUT = """
@triton.jit
def dropout(X, Y, N, p, seed, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + o, mask=o < N)
    keep = tl.rand(seed, o) > p
    tl.store(Y + o, tl.where(keep, x / (1 - p), 0.0), mask=o < N)
"""
N, P = 16384, 0.2


def _dropout(x: torch.Tensor, p: float, stream: int, keep_above: float | None = None) -> torch.Tensor:
    """x dropped with probability p, the mask drawn from its own stream (another compiler's tl.rand)."""
    u = torch.rand(x.shape, generator=torch.Generator().manual_seed(stream))
    return torch.where(u > (p if keep_above is None else keep_above), x / (1 - p), 0.0)


def _record(stream: dict, backend: str = "ascend-lowered") -> dict:
    return {"backend": backend, "mode": "run", "suite": "accuracy", "kernel": "dropout", "case": f"N={N}",
            "params": {"N": N, "dtype": "fp32"}, "status": "failed", "compile": None,
            "reason": "output 'y': 32% of elements off", "random_stream": stream,
            "metrics": {"max_abs_err": 4.1, "err_ratio": 0.8, "mismatch_frac": 0.32, "nan_count": 0}}


def _stream(out: torch.Tensor, ref: torch.Tensor) -> dict:
    return compare({"y": out}, {"y": ref.double()}, {"rtol": 1.3e-6, "atol": 1e-5})


X = torch.randn(N, generator=torch.Generator().manual_seed(1))
REF = _dropout(X, P, stream=2)  # the recording's (the GPU's) mask


def test_another_stream_with_the_same_distribution_is_a_random_stream_not_a_bug():
    record = _record(_stream(_dropout(X, P, stream=3), REF))
    gpu_pass = {"backend": "interpret", "status": "passed"}
    owner = decide(record, {"interpret": gpu_pass}, DROPOUT)
    assert (owner.who, owner.limit, owner.provisional) == ("random", "random-stream", False), owner
    assert "tl.rand" in owner.evidence and "pass it in as a tensor" in owner.evidence
    assert "of the mask differs" in owner.evidence, owner.evidence
    assert plan_drafts({**record, "owner": owner}).kind == "tier"  # a note, never a vendor draft nor AUTHOR.md
    # through the stage: an expected divergence with its reason and link
    out = _record(record["random_stream"])
    triage(out, type("F", (), {"version": lambda s, r: None, "others": lambda s, r: {"interpret": gpu_pass},
                               "versions": lambda s, r: {}})(), CaseCode(source=lambda: DROPOUT))
    assert out["status"] == "xfailed" and out["reason"].startswith("random stream: tl.rand"), out["reason"]
    assert out["source_facts"]["random"] == ["tl.rand"]


def test_controls_a_wrong_keep_probability_or_scale_still_fails_and_a_kernel_without_tl_rand_is_unchanged():
    gpu_pass = {"interpret": {"backend": "interpret", "status": "passed"}}
    inverted = _stream(_dropout(X, P, stream=3, keep_above=1 - P), REF)  # keeps 20 %, not 80 %
    assert not inverted["agrees"] and "kept fraction" in inverted["outputs"]["y"]["why"]
    owner = decide(_record(inverted), gpu_pass, DROPOUT)
    assert owner.who == "triton-ascend" and owner.limit is None, owner  # as before: the odd one out
    rescaled = _stream(_dropout(X, P, stream=3) * (1 - P), REF)  # forgot the 1 / (1 - p)
    assert not rescaled["agrees"] and "beyond the tolerance" in rescaled["outputs"]["y"]["why"]
    assert decide(_record(rescaled), gpu_pass, DROPOUT).who != "random"
    # no tl.rand in the source: the distribution figures are not evidence
    agreeing = _stream(_dropout(X, P, stream=3), REF)
    plain = DROPOUT.replace("tl.rand(seed, o)", "tl.load(X + o)")
    assert decide(_record(agreeing), gpu_pass, plain).who != "random"
    # the report's re-triage reads the facts kept on the record
    assert decide({**_record(agreeing), "source_facts": {"random": ["tl.rand"]}}, gpu_pass, "").who == "random"


def test_random_values_themselves_are_judged_by_their_moments():
    g = torch.Generator().manual_seed(5)
    a, b = torch.rand(4096, generator=g), torch.rand(4096, generator=g)
    assert compare({"u": a}, {"u": b.double()}, None)["agrees"]
    assert not compare({"u": a * 0.9}, {"u": b.double()}, None)["agrees"]  # control: a shifted distribution
    assert not compare({"u": a[:10]}, {"u": b[:10].double()}, None)["agrees"]  # too few elements to judge


def test_the_verdict_cell_says_random_stream_not_a_failure():
    from parity.report.verdict import result

    owner = decide(_record(_stream(_dropout(X, P, stream=3), REF)), {}, DROPOUT)
    record = {**_record({}), "status": "xfailed", "owner": owner.as_json(), "repro": None, "tolerance": None,
              "known_divergence": {"reason": "random stream", "link": "https://x", "expected_by": None}}
    cell = result("lowered", [record], "ascend-lowered", "", {})
    assert cell.mark == "–" and cell.text.startswith("lowered – random stream"), cell
    assert "by design" in cell.why
