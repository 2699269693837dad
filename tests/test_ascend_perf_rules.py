"""parity.backends.ascend.perf_rules: each rule catches its planted pattern and passes the fixed twin."""

from __future__ import annotations

from parity.backends.ascend.arch import ASCEND_ARCHS
from parity.backends.ascend.perf_rules import Evidence, SourceText, TensorArg, advise

B1, B3 = ASCEND_ARCHS["Ascend910B1"], ASCEND_ARCHS["Ascend910B3"]

PERSISTENT_FIXED = '''
def persistent(x_ptr, n_tiles, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for tile in range(pid, n_tiles, 20):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2)
'''
PERSISTENT_READ = PERSISTENT_FIXED.replace("range(pid, n_tiles, 20)", "range(pid, n_tiles, tl.num_programs(0))")

BIG = {"x_ptr": TensorArg("float32", 4, (1 << 22,), (1,))}  # 16 MiB: large enough to judge the cores
SMALL = {"x_ptr": TensorArg("float32", 4, (1024,), (1,))}


def _ev(src: str, grid: tuple[int, ...], arch=B1, core_type="aiv", tensors=BIG, constants=None, scalars=None,
        module_ints=None) -> Evidence:
    return Evidence("k", arch, grid, core_type, (SourceText("k", src, 10, "k.py"),), constants or {"BLOCK": 1024},
                    scalars or {}, tensors, module_ints or {})


def _rules(ev: Evidence) -> list[str]:
    return [f.rule for f in advise(ev).findings]


def test_hard_coded_count_on_a_24_core_part_and_its_twin():
    found = advise(_ev(PERSISTENT_FIXED, (20,), core_type="aic")).findings
    assert [f.rule for f in found] == ["cores.hard_coded"]
    assert "20 of Ascend910B1's 24 cube cores busy, 4 idle" in found[0].evidence
    assert found[0].line == "k.py:13"  # the loop's line in its file
    assert "num_aicore" in found[0].change
    # the twin reads the count: launched with the arch's 24 programs, nothing to say
    assert _rules(_ev(PERSISTENT_READ, (24,), core_type="aic")) == []


def test_hard_coded_count_matching_this_part_still_names_the_others():
    found = advise(_ev(PERSISTENT_FIXED, (20,), arch=B3, core_type="aic")).findings
    assert [f.rule for f in found] == ["cores.hard_coded"]
    assert "matches Ascend910B3's 20 cube cores" in found[0].evidence
    assert "on 910B1/910B2 (24 cube cores) 4 idle" in found[0].evidence


def test_module_constant_step_is_hard_coded_but_a_constexpr_is_the_launchers():
    src = PERSISTENT_FIXED.replace("range(pid, n_tiles, 20)", "range(pid, n_tiles, NUM_CORES)")
    assert _rules(_ev(src, (40,), module_ints={"NUM_CORES": 40})) == ["cores.hard_coded"]
    assert _rules(_ev(src, (48,), constants={"BLOCK": 1024, "NUM_CORES": 48})) == []


def test_idle_cores_and_the_small_launch_that_is_not_judged():
    src = PERSISTENT_READ
    assert _rules(_ev(src, (8,))) == ["cores.idle"]
    advice = advise(_ev(src, (8,), tensors=SMALL))
    assert advice.findings == [] and "small launch" in advice.not_checked["cores.idle"]
    assert _rules(_ev(src, (48,))) == []  # the twin: one program per vector core


def test_last_wave_and_grid_of_one():
    assert _rules(_ev(PERSISTENT_READ, (49,))) == ["cores.last_wave"]  # 2 waves, the last with 1 of 48
    assert _rules(_ev(PERSISTENT_READ, (48 * 10 + 1,))) == []  # 11 waves: the tail costs under a quarter
    assert _rules(_ev(PERSISTENT_READ, (1,))) == ["shape.one_program"]
    assert _rules(_ev(PERSISTENT_READ, (96,))) == []


def test_no_grid_or_core_type_is_not_checked():
    advice = advise(_ev(PERSISTENT_READ, (), core_type=None))
    assert advice.findings == [] and "cores.idle" in advice.not_checked


BLOCKS_2D = '''
def tile(x_ptr, y_ptr, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    tl.store(y_ptr + rows * stride_m + cols, tl.load(x_ptr + rows * stride_m + cols))
'''


def test_degenerate_blocks_and_their_twin():
    assert _rules(_ev(BLOCKS_2D, (48,), constants={"BLOCK_M": 64, "BLOCK_N": 4})) == ["shape.under_32_bytes"]
    assert _rules(_ev(BLOCKS_2D, (48,), constants={"BLOCK_M": 64, "BLOCK_N": 1})) == ["shape.block_of_one"]
    # BLOCK_M sizes rows, not the innermost axis: one row of 64 fp32 is aligned (mojo_opset's row blocks)
    assert _rules(_ev(BLOCKS_2D, (48,), constants={"BLOCK_M": 1, "BLOCK_N": 64})) == []


ROWS_BY_NAME = '''
def rows(x_ptr, n_cols, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    rows_off = tl.program_id(0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols_off = tl.arange(0, BLOCK_SIZE_N)
    tl.store(x_ptr + rows_off[:, None] * n_cols + cols_off[None, :], 0.0)
'''


def test_innermost_block_through_an_assigned_name():
    one_row = {"BLOCK_SIZE_M": 1, "BLOCK_SIZE_N": 1024}
    assert _rules(_ev(ROWS_BY_NAME, (48,), constants=one_row)) == []
    one_col = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 1}
    assert _rules(_ev(ROWS_BY_NAME, (48,), constants=one_col)) == ["shape.block_of_one"]


BLOCK_PTR = '''
def bp(x_ptr, stride_r, stride_c, R, C, BR: tl.constexpr, BC: tl.constexpr):
    p = tl.make_block_ptr(base=x_ptr, shape=(R, C), strides=(stride_r, stride_c), offsets=(0, 0),
                          block_shape=(BR, BC), order=(1, 0))
    tl.store(p, tl.load(p) + 1)
'''


def test_block_pointer_stride_and_its_twin():
    consts = {"BR": 64, "BC": 64}
    strided = _ev(BLOCK_PTR, (48,), constants=consts, scalars={"stride_r": 1, "stride_c": 4096})
    found = advise(strided).findings
    assert [f.rule for f in found] == ["contiguity.block_ptr"] and found[0].line == "k.py:12"
    twin = _ev(BLOCK_PTR, (48,), constants={**consts, "stride_c": 1}, scalars={"stride_r": 4096})
    assert _rules(twin) == []
    unknown = advise(_ev(BLOCK_PTR, (48,), constants=consts))
    assert unknown.findings == [] and "unknown at the launch" in unknown.not_checked["contiguity.block_ptr"]


def test_non_contiguous_tensor_argument_and_its_twin():
    t = {"x_ptr": TensorArg("float32", 4, (2048, 2048), (1, 2048)),
         "y_ptr": TensorArg("float32", 4, (2048, 2048), (2048, 1))}
    assert _rules(_ev(BLOCKS_2D, (48,), tensors=t, constants={"BLOCK_M": 64, "BLOCK_N": 64})) == ["contiguity.tensor"]
    t["x_ptr"] = TensorArg("float32", 4, (2048, 2048), (2048, 1))
    assert _rules(_ev(BLOCKS_2D, (48,), tensors=t, constants={"BLOCK_M": 64, "BLOCK_N": 64})) == []


ATTN = '''
def attn(q_ptr, k_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    q = tl.load(q_ptr + offs[:, None] * BLOCK + offs[None, :])
    k = tl.load(k_ptr + offs[:, None] * BLOCK + offs[None, :])
    s = tl.dot(q, k)
    p = tl.exp(s - tl.max(s, 1)[:, None])
    tl.store(q_ptr + offs[:, None] * BLOCK + offs[None, :], p)
'''


def test_cube_vector_note_only_for_a_mix_kernel():
    found = advise(_ev(ATTN, (24,), core_type="mix", constants={"BLOCK": 64})).findings
    assert [f.rule for f in found] == ["cv.mix"] and "no speedup claimed" in found[0].change
    assert _rules(_ev(ATTN, (24,), core_type="aic", constants={"BLOCK": 64})) == []


def test_a_one_element_tile_of_a_tiny_problem_is_not_judged():
    advice = advise(_ev(BLOCKS_2D, (48,), tensors=SMALL, constants={"BLOCK_M": 1, "BLOCK_N": 4}))
    assert advice.findings == [] and "small launch" in advice.not_checked["shape.block_of_one"]


GATED = '''
def gated(x_ptr, g_ptr, T, H: tl.constexpr, BT: tl.constexpr, USE_G: tl.constexpr):
    i_t = tl.program_id(0)
    p_x = tl.make_block_ptr(x_ptr, (T,), (1,), (i_t * BT,), (BT,), (0,))
    b_x = tl.load(p_x, boundary_check=(0,))
    if USE_G:
        p_g = tl.make_block_ptr(g_ptr, (T,), (H,), (i_t * BT,), (BT,), (0,))
        b_x *= tl.exp(tl.load(p_g, boundary_check=(0,)))
    elif BT == 16:
        b_x = tl.where(b_x > 0, b_x, 0.0)
    else:
        b_x = tl.sum(b_x, 0)
    tl.store(p_x, b_x, boundary_check=(0,))
'''


def test_a_constexpr_branch_the_launch_rules_out_is_not_evidence():
    """g's stride-H block pointer sits under `if USE_G:`: a finding at USE_G=1 (the control), none at USE_G=0,
    where the frontend never builds it; line numbers survive the blanking."""
    on = advise(_ev(GATED, (48,), core_type="mix", constants={"H": 4, "BT": 64, "USE_G": True}))
    assert [(f.rule, f.line) for f in on.findings if f.rule.startswith("contiguity")] == [
        ("contiguity.block_ptr", "k.py:16")]
    off = advise(_ev(GATED, (48,), core_type="mix", constants={"H": 4, "BT": 64, "USE_G": False}))
    assert not [f for f in off.findings if f.rule.startswith("contiguity")]
    # an unknown test keeps every branch (g's block pointer is judged), and the elif/else fold on BT
    unknown = advise(_ev(GATED, (48,), core_type="mix", constants={"H": 4, "BT": 64}))
    assert [f.rule for f in unknown.findings if f.rule.startswith("contiguity")] == ["contiguity.block_ptr"]


def test_live_source_blanks_only_the_ruled_out_branches():
    from parity.backends.ascend.perf_evidence import live_source

    src = SourceText("k", GATED, 10, "k.py")
    text = live_source(src, {"USE_G": False, "BT": 16}).text
    assert "make_block_ptr(g_ptr" not in text and "tl.where" in text and "tl.sum" not in text
    assert text.splitlines()[12] == GATED.splitlines()[12] == "    tl.store(p_x, b_x, boundary_check=(0,))"  # kept
    assert live_source(src, {}).text == GATED  # nothing folds: unchanged


FLAGS_AND_TILES = '''
def flagged(x_ptr, b_ptr, y_ptr, N, HAS_BIAS: tl.constexpr, NUM_BLOCKS: tl.constexpr, R: tl.constexpr,
            W: tl.constexpr, STEPS: tl.constexpr):
    acc = tl.zeros((R, W), dtype=tl.float32)
    fill = tl.full([W], 0.0, tl.float32)
    for i in range(STEPS):
        acc += tl.load(x_ptr + i * NUM_BLOCKS + tl.arange(0, R)[:, None] * N + tl.arange(0, W)[None, :])
    if HAS_BIAS:
        acc += tl.load(b_ptr + tl.arange(0, W))[None, :] + fill[None, :]
    tl.store(y_ptr + tl.arange(0, R)[:, None] * N + tl.arange(0, W)[None, :], acc)
'''


def test_block_sizes_are_found_by_use_not_by_name():
    from parity.backends.ascend.perf_evidence import block_sizes

    # BR, BC size the block pointer: block sizes, though no name rule knows them (the user's kernel of 2026-12-06)
    consts = {"BR": 64, "BC": 1, "stride_c": 1}
    assert block_sizes(_ev(BLOCK_PTR, (48,), constants=consts)) == {"BR": 64, "BC": 1}
    assert _rules(_ev(BLOCK_PTR, (48,), constants=consts, scalars={"stride_r": 4096})) == ["shape.block_of_one"]
    # R and W size tl.zeros, tl.full and the aranges; a flag, a loop count and NUM_BLOCKS (BLOCK in its name,
    # used only in arithmetic) size no tile: the negative control
    flags = {"HAS_BIAS": True, "NUM_BLOCKS": 4096, "R": 64, "W": 4, "STEPS": 1}
    assert block_sizes(_ev(FLAGS_AND_TILES, (48,), constants=flags)) == {"R": 64, "W": 4}
    assert _rules(_ev(FLAGS_AND_TILES, (48,), constants=flags)) == ["shape.under_32_bytes"]  # W: 16 bytes
    assert _rules(_ev(FLAGS_AND_TILES, (48,), constants={**flags, "NUM_BLOCKS": 1, "STEPS": 1, "W": 8})) == []
    flag_only = "def f(x_ptr, HAS_BIAS: tl.constexpr, NUM: tl.constexpr):\n    if HAS_BIAS:\n" \
                "        tl.store(x_ptr, NUM)\n"
    only_flags = advise(_ev(flag_only, (48,), constants={"HAS_BIAS": True, "NUM": 1}))
    assert "no block-size constexpr in this compile" in only_flags.not_checked["shape.block_of_one"]
