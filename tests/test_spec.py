"""Spec validation, case ids, seeded inputs and the reference cache."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from parity.cases import by_level, product
from parity.run.refcache import ReferenceCache, input_hash
from parity.spec import Case, KernelSpec, SpecError, Tolerance, registry, validate_cases
from parity.spec import inputs as inp
from parity.spec.registry import Registry
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
        reg.add(replace(planted.correct_add), "mod_b")  # another spec under the same name


def test_two_modules_of_one_library_that_share_specs_load_together():
    """A library module that re-exports another's SPECS (mojo_opset's list holds mojo_opset_attn's): selecting
    both registers each spec once; the control is a different spec under a taken name, still an error."""
    import types

    attn = types.ModuleType("lib_attn")
    attn.SPECS = [planted.correct_add]  # type: ignore[attr-defined]
    whole = types.ModuleType("lib_all")
    whole.SPECS = [*attn.SPECS]  # type: ignore[attr-defined]
    reg = Registry()
    reg.add_module(whole)
    reg.add_module(attn)
    assert reg.names() == [planted.correct_add.name]
    twin = types.ModuleType("lib_twin")
    twin.SPECS = [replace(planted.correct_add)]  # type: ignore[attr-defined]
    with pytest.raises(SpecError, match="duplicate kernel name"):
        reg.add_module(twin)


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


def test_a_spec_without_reference_names_the_spec_and_the_fix():
    fields = {f: getattr(planted.correct_add, f) for f in ("name", "family", "kernel", "launch", "cases",
                                                             "make_inputs")}
    with pytest.raises(SpecError, match=r"'correct_add': missing `reference`; give `reference`: an fp64"):
        KernelSpec(**fields)
    assert KernelSpec(**fields, reference=planted.correct_add.reference).name == "correct_add"  # control


def write_module(root, name: str, text: str) -> None:
    (root / f"{name}.py").write_text(text)


@pytest.mark.parametrize(("body", "expected"), [
    ("def broken(:\n    pass\n", r"--kernels m_syntax: syntax error at .*m_syntax.py:1"),
    ("import parity_no_such_dep\n", r"needs the package 'parity_no_such_dep', which is not installed"),
    ("SPECS = []\nraise RuntimeError('boom')\n", r"raised RuntimeError: boom \(at .*m_raise.py:2\)"),
    ("from tests.planted import correct_add\nfrom parity import KernelSpec\n"
     "SPECS = [KernelSpec(name='x', family='f', kernel=1)]\n", r"'x': missing `launch`, .*\(at .*m_spec.py:3\)"),
])
def test_a_broken_user_module_is_one_error_naming_module_and_fix(tmp_path, monkeypatch, body, expected):
    name = {"def": "m_syntax", "imp": "m_dep", "SPE": "m_raise", "fro": "m_spec"}[body[:3]]
    write_module(tmp_path, name, body)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SpecError, match=expected):
        registry.import_user_module(name)


def test_a_module_that_is_absent_is_not_reported_as_a_missing_dependency():
    with pytest.raises(SpecError, match="importable from the working directory") as info:
        registry.import_user_module("parity_no_such_module.sub")
    assert "needs the package" not in str(info.value)


def test_kernels_takes_a_file_path_under_the_working_directory():
    assert registry.module_name("examples/user_kernels/l2norm.py") == "examples.user_kernels.l2norm"
    assert registry.module_name("examples.user_kernels.l2norm") == "examples.user_kernels.l2norm"
    with pytest.raises(SpecError, match="dotted module name"):
        registry.module_name("/nonexistent/elsewhere/mine.py")


def test_an_entry_point_that_raises_is_a_spec_error_not_a_crash():
    def explode() -> None:
        raise ValueError("bad plugin")

    with pytest.raises(SpecError, match=r"entry point 'mine' \(pkg.specs\): importing it raised ValueError"):
        registry.load("pkg.specs", "entry point 'mine' (pkg.specs)", explode)


def test_a_dynamic_arg_that_is_no_case_parameter_is_a_spec_error_naming_the_parameters():
    # the kernel's own argument `n` named instead of the case parameter `N`: the sweep would vary nothing
    misnamed = replace(planted.correct_add, dynamic_args=("n",))
    with pytest.raises(SpecError, match=r"'n', which is no case parameter; the cases have 'N'.*did you mean 'N'"):
        validate_cases(misnamed, "quick")
    from parity.spec import validate_compile_cases
    with pytest.raises(SpecError, match="no case parameter"):
        validate_compile_cases(misnamed, "quick")
    # the clean twin: the case parameter itself
    assert validate_cases(replace(planted.correct_add, dynamic_args=("N",)), "quick")


def test_a_sweep_of_nothing_is_not_checked_never_ok():
    from parity.compile.specialize import SweepResult, verdict
    nothing = SweepResult(kernel="k", arg="n", values=[1, 15], bases=0, compiles=0, per_base_max=0)
    assert verdict(nothing, 1) == "not checked"
    swept = SweepResult(kernel="k", arg="N", values=[1, 15], bases=2, compiles=2, per_base_max=1)
    assert verdict(swept, 1) == "ok"
    assert verdict(replace(swept, per_base_max=2), 1) == "storm"
    assert verdict(replace(swept, compiles=0, per_base_max=0), 1) == "not launched"  # counted nothing either


def test_module_colon_name_selects_one_kernel_of_a_module_and_the_module_alone_selects_all():
    whole = [s.name for s in registry.build(["tests.planted_envelope"], include_shared=False)[1]]
    assert len(whole) > 1 and "env_int32" in whole  # the control: the module alone brings every spec of it
    one = registry.build(["tests.planted_envelope:env_int32"], include_shared=False)[1]
    assert [s.name for s in one] == ["env_int32"]
    with pytest.raises(SpecError, match=r"has no kernel or family 'env_nope'; its kernels: .*env_int32"):
        registry.build(["tests.planted_envelope:env_nope"], include_shared=False)
