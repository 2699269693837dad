"""A zero block-pointer stride on ascend-lowered: triton-adapter's module divides by it (triton-ascend PR 1838).

The division is found in the module before it runs (parity.backends.ascend.cpu_divzero), so the case fails with
the operation named instead of killing its process with SIGFPE, and triage owns it to triton-ascend as the bug
already reported, with a note, not a draft. Controls: a nested or constant-zero division, a nonzero stride and a
kernel's own division by a zero argument are not it. The end-to-end control is in tests/test_ascend_lowered.py.
"""

from __future__ import annotations

from parity.backends.ascend.cpu_divzero import ZeroDivisionInModule, top_level_divisions, zero_divisions
from parity.results import OwnerKind
from parity.triage import decide, plan_drafts

# the shape of triton-adapter 3.2.0's module for a broadcast operand's block pointer (boundary_check=(0, 1))
IR = ("module {\n"
      "  func.func @k(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xf32> {tt.divisibility = 16 : i32}, "
      "%arg3: i32, %arg4: i32 {tt.divisibility = 16 : i32}, %arg5: i32, %arg6: i32, %arg7: i32, %arg8: i32, "
      "%arg9: i32, %arg10: i32) attributes {mix_mode = \"aiv\"} {\n") + """    %c0 = arith.constant 0 : index
    %c16_i32 = arith.constant 16 : i32
    %0 = arith.muli %arg8, %c16_i32 : i32
    %1 = arith.index_cast %0 : i32 to index
    %2 = arith.index_cast %arg4 : i32 to index
    %3 = arith.muli %1, %2 : index
    %4 = arith.divsi %3, %2 : index
    %5 = arith.remsi %3, %2 : index
    %6 = arith.divsi %c0, %2 : index
    %7 = arith.index_cast %arg3 : i32 to index
    %8 = arith.cmpi slt, %4, %7 : index
    scf.if %8 {
      %9 = arith.divsi %3, %7 : index
    } {hivm.unlikely_condition}
    return
  }
}"""


def test_top_level_divisions_by_an_argument_are_found_and_nested_or_zero_dividends_are_not():
    found = top_level_divisions(IR)
    assert [n for _, n in found] == [4, 4]  # divsi and remsi by %arg4; not 0 / %arg4, not the one inside scf.if
    assert found[0][0] == "%4 = arith.divsi %3, %2 : index"


def test_only_an_argument_that_is_zero_in_this_launch_counts():
    names = ["x", "M", "stride_b0"]  # the user arguments after the lock and workspace memrefs
    hits = zero_divisions(IR, 2, names, [object(), 19, 0])
    assert len(hits) == 2 and all("divides by stride_b0 (%arg4), which is 0 in this launch" in h for h in hits)
    assert zero_divisions(IR, 2, names, [object(), 19, 7]) == []  # control: a nonzero stride
    assert zero_divisions(IR, 2, names, [object(), 0, 7]) == []  # control: the nested division's argument


def record(message: str) -> dict:
    return {"backend": "ascend-lowered", "kernel": "k", "case": "b=row", "status": "error", "params": {},
            "reason": f"parity.backends.ascend.cpu_divzero.ZeroDivisionInModule: {message}", "compile": None}


BLOCK_PTR = ("b = tl.make_block_ptr(b_ptr, (M, N), (stride_b0, 1), (pid * 16, 0), (16, 8), order=(1, 0))\n"
             "v = tl.load(b, boundary_check=(0, 1))")


def test_a_zero_block_pointer_stride_is_triton_ascends_known_bug_with_a_note():
    hits = zero_divisions(IR, 2, ["x", "M", "stride_b0"], [object(), 19, 0])
    owner = decide(record(str(ZeroDivisionInModule("k", hits))), {}, BLOCK_PTR)
    assert (owner.who, owner.limit) == (OwnerKind.TRITON_ASCEND, "ascend-block-ptr-zero-stride"), owner
    assert not owner.provisional and "triton-ascend/pull/1838" in owner.evidence
    assert plan_drafts({"owner": owner}).kind == "tier"  # a note with the link, no fresh vendor draft


def test_a_kernels_own_division_by_a_zero_argument_is_not_that_bug():
    hits = zero_divisions(IR, 2, ["x", "M", "n"], [object(), 19, 0])
    own = BLOCK_PTR + "\nq = pid // n"  # n is no block pointer's stride
    owner = decide(record(str(ZeroDivisionInModule("k", hits))), {}, own)
    assert owner.limit != "ascend-block-ptr-zero-stride" and owner.who is not OwnerKind.TRITON_ASCEND, owner
