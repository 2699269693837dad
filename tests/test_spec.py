"""Spec validation, case ids, seeded inputs and the reference cache."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from parity import inputs as inp
from parity.cases import by_level, product
from parity.registry import Registry
from parity.run.refcache import ReferenceCache, input_hash
from parity.spec import Case, SpecError, Tolerance, validate_cases
from tests import planted


def test_case_ids_are_stable_and_readable():
    case = Case({"T": 1000, "H": 4, "dtype": "bf16", "use_g": True, "cu": (0, 64, 100)})
    assert case.id == "T=1000,H=4,dtype=bf16,use_g=1,cu=0-64-100"


def test_full_level_extends_quick_without_duplicates():
    cases = by_level(product(N=[1, 2]), product(N=[2, 3]))
    assert [c.id for c in cases("quick")] == ["N=1", "N=2"]
    assert [c.id for c in cases("full")] == ["N=1", "N=2", "N=3"]


def test_override_without_reason_is_rejected():
    with pytest.raises(SpecError, match="no reason"):
        replace(planted.correct_add, tolerance={"fp16": Tolerance(rtol=1, atol=1)})


def test_unknown_dtype_and_level_list_the_valid_values():
    with pytest.raises(SpecError, match="valid"):
        replace(planted.correct_add, tolerance={"fp8": Tolerance(rtol=1, atol=1, reason="x")})
    with pytest.raises(SpecError, match="quick, full"):
        validate_cases(planted.correct_add, "everything")
    bad = replace(planted.correct_add, cases=by_level(product(N=[1], dtype=["fp12"])))
    with pytest.raises(SpecError, match="fp12"):
        validate_cases(bad, "quick")


def test_duplicate_names_are_rejected_naming_both_origins():
    reg = Registry()
    reg.add(planted.correct_add, "mod_a")
    with pytest.raises(SpecError, match="mod_a"):
        reg.add(planted.correct_add, "mod_b")


def test_unknown_kernel_lists_the_valid_ones():
    reg = Registry()
    reg.add(planted.correct_add, "m")
    with pytest.raises(SpecError, match="correct_add"):
        reg.select(["nope"])


def test_inputs_are_bit_identical_for_a_seed_and_differ_across_cases():
    spec = planted.correct_add
    case = spec.cases("quick")[0]
    seed_a = inp.case_seed(0, spec.name, case.id)
    a = spec.make_inputs(case.params, inp.generator(seed_a))
    b = spec.make_inputs(case.params, inp.generator(seed_a))
    assert torch.equal(a["x"].view(torch.int16), b["x"].view(torch.int16))
    other = inp.case_seed(0, spec.name, "N=5")
    assert other != seed_a and inp.case_seed(1, spec.name, case.id) != seed_a


def test_nan_empty_prefills_every_element():
    out = inp.nan_empty((3, 5), torch.bfloat16, "cpu")
    assert torch.isnan(out).all()


def test_reference_cache_round_trips_without_pickle(tmp_path):
    cache = ReferenceCache(tmp_path)
    x = {"x": torch.arange(4.0)}
    key = input_hash("k", test_reference_cache_round_trips_without_pickle, x, {"N": 4})
    assert cache.get(key) is None
    cache.put(key, {"out": torch.arange(4, dtype=torch.float64)})
    got = cache.get(key)
    assert got is not None and torch.equal(got["out"], torch.arange(4, dtype=torch.float64))
    assert input_hash("k", test_reference_cache_round_trips_without_pickle, {"x": x["x"] + 1}, {"N": 4}) != key
