"""vllm-ascend's sampler kernels at the shapes their tests name: the penalties (`worker/v2/sample/penalties.py`,
test_penality.py) and greedy Gumbel sampling (`gumbel.py`, tests/ut/sample/a2/test_gumbel_sampling.py).

Loaded as libraries/vllm_ascend.py loads its kernels (the same checkout, PARITY_VLLM_ASCEND, and stand-ins); a module
of its own so that neither grows past the layout's size limit. References are ours, in fp64.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries.vllm_ascend import LIBRARY, SAMPLE, _spec, kernels, op
from parity import randn
from parity.cases import by_level, product

__all__ = ["LIBRARY", "SPECS"]
Params = Mapping[str, Any]


def _penalties_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """test_penality.py's create_test_data, drawn from `gen`: per request state a repetition penalty (70 %: in
    [0.6, 1.4)), frequency and presence penalties (50 %: in [0, 0.2)), a prompt of V/20 tokens as a packed bit mask
    and V/20 output tokens counted 1 to 9. Each token's speculative position is drawn in [0, S] as there, but capped
    at its index: the test's draw can point before the token buffer, which a real batch never does."""
    t, v, n, s = p["T"], p["V"], p["N"], p["S"]

    def maybe(prob: float, low: float, span: float, neutral: float) -> torch.Tensor:
        keep = torch.rand((n,), generator=gen) > prob
        return torch.where(keep, torch.rand((n,), generator=gen) * span + low, torch.full((n,), neutral))

    mask = torch.zeros((n, (v + 31) // 32), dtype=torch.int64)
    counts = torch.zeros((n, v), dtype=torch.int32)
    for state in range(n):
        for token in torch.randperm(v, generator=gen)[: max(1, v // 20)].tolist():
            mask[state, token // 32] |= 1 << (token % 32)
        tokens = torch.randint(0, v, (max(1, v // 20),), generator=gen)
        counts[state, tokens] = torch.randint(1, 10, tokens.shape, generator=gen, dtype=torch.int32)
    pos = torch.randint(0, s + 1, (t,), generator=gen, dtype=torch.int32)
    return {"logits": randn((t, v), p["dtype"], gen), "mapping": torch.randint(0, n, (t,), generator=gen,
                                                                                  dtype=torch.int32),
            "token_ids": torch.randint(0, v, (t,), generator=gen, dtype=torch.int32),
            "pos": torch.minimum(pos, torch.arange(t, dtype=torch.int32)),
            "rep": maybe(0.3, 0.6, 0.8, 1.0), "freq": maybe(0.5, 0.0, 0.2, 0.0), "pres": maybe(0.5, 0.0, 0.2, 0.0),
            "prompt_mask": mask.to(torch.int32),  # bit 31 wraps to the sign bit, as the test's int32 |= does
            "counts": counts}


def _penalties_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["logits"].clone()  # penalised in place
    op(f"{SAMPLE}.penalties:apply_penalties")(
        logits, inputs["mapping"], inputs["token_ids"], inputs["pos"], inputs["rep"], inputs["freq"], inputs["pres"],
        inputs["prompt_mask"], inputs["counts"])
    return {"logits": logits}


def _penalties_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["logits"].clone()
    vocab = torch.arange(p["V"])
    for t in range(p["T"]):
        req = int(inputs["mapping"][t])
        rep, freq, pres = (float(inputs[k][req]) for k in ("rep", "freq", "pres"))
        if rep == 1.0 and freq == 0.0 and pres == 0.0:
            continue
        counts = inputs["counts"][req].to(torch.float64).clone()
        pos = int(inputs["pos"][t])
        for prev in inputs["token_ids"][t - pos + 1: t + 1].tolist():  # the earlier draft tokens and this one
            counts[prev] += 1
        seen = counts != 0
        words = inputs["prompt_mask"][req].to(torch.int64) & 0xFFFFFFFF
        prompt = ((words[vocab // 32] >> (vocab % 32)) & 1).bool()
        row = logits[t]
        if rep != 1.0:
            scale = torch.where(prompt | seen, rep, 1.0)
            row = torch.where(row > 0, row / scale, row * scale)
        logits[t] = row - freq * counts - pres * seen.to(torch.float64)
    return {"logits": logits}


def _gumbel_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """test_gumbel_sample_greedy's tensors: every temperature 0, so the draw is the row's argmax."""
    return {"logits": randn((p["T"], p["V"]), "fp32", gen),
            "mapping": torch.randint(0, p["R"], (p["T"],), generator=gen, dtype=torch.int32),
            "seed": torch.randint(0, 2**31, (p["R"],), generator=gen, dtype=torch.int64)}


def _gumbel_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["logits"]
    pos = torch.arange(p["T"], dtype=torch.int32, device=logits.device)
    temperature = torch.zeros((p["R"],), dtype=torch.float32, device=logits.device)
    return {"token": op(f"{SAMPLE}.gumbel:gumbel_sample")(logits, inputs["mapping"], temperature, inputs["seed"], pos,
                                                          apply_temperature=bool(p["apply"]))}


def _gumbel_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"token": inputs["logits"].argmax(-1).to(torch.float64)}


SPECS = [
    _spec("apply_penalties", kernels(f"{SAMPLE}.penalties:_penalties_kernel"), launch=_penalties_launch,
          reference=_penalties_ref, make_inputs=_penalties_inputs,
          cases=by_level(product(T=[4], V=[1000], N=[4], S=[3], dtype=["bf16"]),
                         product(T=[1, 4], V=[1000], N=[1, 4], S=[0, 1, 3], dtype=["bf16", "fp16"])),
          doc="test_penality.py::test_apply_penalties: repetition (packed prompt bits and output counts), frequency "
              "and presence penalties in place, a speculative token counting its request's earlier draft tokens"),
    _spec("gumbel_sample_greedy", kernels(f"{SAMPLE}.gumbel:_gumbel_sample_kernel"), launch=_gumbel_launch,
          reference=_gumbel_ref, make_inputs=_gumbel_inputs,
          cases=by_level(product(T=[4], R=[4], V=[32000], apply=[0]),
                         [c for t, r, v in ((1, 1, 32000), (4, 4, 32000), (8, 4, 32000), (16, 8, 102400))
                          for c in product(T=[t], R=[r], V=[v], apply=[0])] + product(T=[4], R=[4], V=[32000],
                                                                                      apply=[1])),
          doc="tests/ut/sample/a2 (A2 PR CI): per 1024-wide block an argmax and max, the block winner picked on "
              "the host; temperature 0, so no Gumbel noise"),
]
