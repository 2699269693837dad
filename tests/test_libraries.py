"""The library specs' plumbing, without the libraries: one pin table for noxfile.py and the spec modules
(the nox option that installs them: test_libraries_nox.py), the fp64 GDN references that the fla backward
spec trusts, and FlagGems' autotune db kept out of the user's home."""

from __future__ import annotations

import functools
import importlib
import os

import pytest
import torch

from libraries import gdn_reference, pins
from libraries._load import Library


def _library_of(name: str) -> Library:
    module = importlib.import_module(pins.module(name))
    found = [v for v in vars(module).values() if isinstance(v, Library)]
    assert len(found) == 1, f"{pins.module(name)} should hold one Library, found {found}"
    return found[0]


@pytest.mark.parametrize("name", sorted(pins.PINS))
def test_each_pin_has_its_spec_module_and_the_module_installs_the_pin(name):
    pin, library = pins.PINS[name], _library_of(name)
    assert library.package == pin.package
    assert library.pip == pin.pip_command() and pin.dist in library.pip and "==" in pin.dist
    module = importlib.import_module(pins.module(name))
    assert module.SPECS and all(spec.unavailable == library.unavailable for spec in module.SPECS)


def test_a_missing_library_skips_with_its_pinned_install_command():
    library = Library("surely_not_installed_lib", "pip install --no-deps surely-not-installed==1.0")
    assert library.unavailable() == ("surely_not_installed_lib is not installed here; "
                                     "`pip install --no-deps surely-not-installed==1.0`")


def test_library_names_are_checked_and_all_means_every_pin():
    assert pins.select("") == [] and pins.select("all") == list(pins.PINS)
    assert pins.select(" fla , liger ") == ["fla", "liger"]
    with pytest.raises(ValueError, match=r"unknown library flash.*fla, liger, flag_gems"):
        pins.select("fla,flash")


def _gdn_inputs(t: int = 128) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    b, h, k, v = 2, 2, 16, 8

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    return [torch.nn.functional.normalize(randn(b, t, h, k), dim=-1),
            torch.nn.functional.normalize(randn(b, t, h, k), dim=-1), randn(b, t, h, v),
            torch.nn.functional.logsigmoid(randn(b, t, h)), torch.sigmoid(randn(b, t, h)), randn(b, h, k, v)]


def _values_and_grads(fn, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    leaves = [x.clone().requires_grad_() for x in inputs]
    o, ht = fn(*leaves)
    gen = torch.Generator().manual_seed(1)
    grads = torch.autograd.grad((o, ht), leaves, (torch.randn(o.shape, generator=gen, dtype=o.dtype),
                                                  torch.randn(ht.shape, generator=gen, dtype=ht.dtype)))
    return [o.detach(), ht.detach(), *grads]


def _max_diff(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b, strict=True))


def test_the_chunk_form_reference_matches_the_recurrence_in_values_and_gradients():
    inputs = _gdn_inputs()
    exact = _values_and_grads(lambda *x: gdn_reference.recurrent(*x, scale=0.25), inputs)
    for bt in (16, 64):
        chunked = functools.partial(gdn_reference.chunked, scale=0.25, bt=bt)
        assert _max_diff(exact, _values_and_grads(chunked, inputs)) < 1e-12


def test_negative_control_a_chunk_form_that_drops_the_carried_state_is_caught():
    """The agreement above can fail: forgetting h0 (a state not carried into the first chunk) differs."""
    inputs = _gdn_inputs()
    exact = _values_and_grads(lambda *x: gdn_reference.recurrent(*x, scale=0.25), inputs)

    def no_h0(q, k, v, g, beta, h0):
        return gdn_reference.chunked(q, k, v, g, beta, h0 * 0, scale=0.25)

    assert _max_diff(exact, _values_and_grads(no_h0, inputs)) > 1e-3


def test_flag_gems_autotune_db_goes_to_parity_cache_per_tier(tmp_path, monkeypatch):
    """FlagGems reads FLAGGEMS_CACHE_DIR when it first builds a path, after the spec module set it."""
    import libraries.flag_gems as gems_specs
    from parity.spec.context import backend_scope

    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FLAGGEMS_CACHE_DIR", "elsewhere/.flaggems")  # both restored by monkeypatch
    monkeypatch.setenv("GEMS_VENDOR", "nvidia")
    with backend_scope("cuda-compile"):
        importlib.reload(gems_specs)
        assert os.environ["FLAGGEMS_CACHE_DIR"] == str(tmp_path / "flaggems" / "cuda-compile")


@pytest.mark.parametrize("name", sorted(pins.PINS))
def test_each_library_op_names_one_perf_case_its_largest_full_case(name):
    """The perf pass runs the library's own autotuning per timed case: one case per op bounds it."""
    for spec in importlib.import_module(pins.module(name)).SPECS:
        full = list(spec.cases("full"))
        assert list(spec.perf_cases) == [full[-1]], spec.name


def _delta_rule_loop(q, k, v, beta, h0, scale):
    """The delta rule token by token, written apart from the GDN references: S += beta k (v - S^T k)^T."""
    s, outs = h0, []
    for t in range(q.shape[1]):
        v_new = v[:, t] - torch.einsum("bhkv,bhk->bhv", s, k[:, t])
        s = s + beta[:, t, :, None, None] * k[:, t, :, :, None] * v_new[:, :, None, :]
        outs.append(scale * torch.einsum("bhkv,bhk->bhv", s, q[:, t]))
    return torch.stack(outs, 1), s


@pytest.mark.parametrize(("gated", "agrees"), [(False, True), (True, False)])
def test_fla_delta_rule_reference_is_gdn_without_decay(gated, agrees):
    """fla_chunk_delta_rule_bwd's reference (GDN's chunk form at g = 0) against a plain delta-rule loop; the
    negative control gives the GDN reference a real decay, which must differ."""
    from libraries import fla

    q, k, v, g, beta, h0 = _gdn_inputs(t=64)
    p = {"K": q.shape[-1]}
    gen = torch.Generator().manual_seed(1)
    inputs = {"q": q, "k": k, "v": v, "beta": beta, "h0": h0,
              "do": torch.randn(v.shape, generator=gen, dtype=v.dtype),
              "dht": torch.randn(h0.shape, generator=gen, dtype=h0.dtype)}
    got = fla._delta_ref(inputs, p)
    if gated:
        got = fla._grads(lambda q_, k_, v_, b_, h_: gdn_reference.chunked(q_, k_, v_, g, b_, h_, scale=p["K"] ** -0.5),
                         inputs, p, fla.DELTA_GRADS)
    want = fla._grads(lambda *x: _delta_rule_loop(*x, scale=p["K"] ** -0.5), inputs, p, fla.DELTA_GRADS)
    diff = max(float((got[n] - want[n]).abs().max()) for n in want)
    assert (diff < 1e-10) == agrees, diff
