"""The envelope's words for a crossing that never launched: a failed compile's error line and its proof verb."""

from __future__ import annotations

import parity.envelope.limits as limits
import parity.envelope.rendering as rendering
from parity.envelope.limits import Observation

# Triton's CompilationError as the compile tier keeps it: the location first, the source, the error last
TRITON_ERROR = ("triton.compiler.errors.CompilationError: at 37:24:\n        global_offs_t = i_t * BT + offs_t\n"
                "                        ^\nNameError('i_t is not defined')")


def _row(obs: Observation) -> dict[str, object]:
    return {"kernel": "k", "target": "cuda", "target_name": "NVIDIA", "axis": {"name": "T", "low": 64, "high": 1 << 20},
            "params": {"T": 64}, "last_ok": None, "first_bad": 64, "bad_probe": {}, "ok_probe": None,
            "crossings": [c.__dict__ for c in limits.crossings(obs)]}


def test_a_compile_error_names_the_error_not_only_its_location():
    crossed = limits.other_crossing(Observation("cuda", {}, compile_errors=[["k", "unsupported", TRITON_ERROR]]))
    assert crossed is not None and "NameError('i_t is not defined')" in crossed.evidence
    plain = limits.other_crossing(Observation("cuda", {}, compile_errors=[["k", "frontend", "bad shape\nmore"]]))
    assert plain is not None and plain.evidence == "bad shape"  # control: a first line that says it is kept alone


def test_a_failed_compile_is_not_said_to_have_launched():
    failed = rendering.sentence(_row(Observation("cuda", {}, compile_errors=[["k", "unsupported", TRITON_ERROR]])))
    assert "T = 64 failed to compile" in failed and "launched" not in failed
    memory = rendering.sentence(_row(Observation("cuda", {}, compile_errors=[["k", "out_of_resources", "shared "
                                                 "memory: requires 360960 bytes while 232448 bytes are available"]])))
    assert "T = 64 failed to compile: the compile says" in memory
    grid = rendering.sentence(_row(Observation("ascend", {}, grids=[["k", [2048, 32, 1]]],
                                               launch_errors=[["k", "grid should be less than 65536!"]])))
    assert "T = 64 compiled and launched" in grid  # control: a grid crossing did launch


def test_a_cube_buffer_overflow_is_on_chip_memory():
    cc = "error: cc overflow, requires 2097152 bits while 1048576 bits available!"
    crossed = limits.crossings(Observation("ascend", {}, compile_errors=[["bmm", "cc_overflow", cc]]))
    assert crossed[0].limit == limits.MEMORY and "2097152 bits" in crossed[0].evidence
    other = limits.crossings(Observation("ascend", {}, compile_errors=[["bmm", "mlir_error", cc]]))
    assert other[0].limit == limits.COMPILE  # control: a kind that names no buffer stays a compile failure


def test_the_table_says_not_checked_where_the_sentence_does():
    row = {**_row(Observation("cuda", {}, launch_errors=[["k", "the launcher raised LibraryImportError: ..."]])),
           "bad_probe": {"not_checked": "the launch compiled nothing"}}
    assert "| k | NVIDIA | T | – | 64 | not checked |" in rendering.table([row])
    assert "not checked: the launch compiled nothing" in rendering.sentence(row)
    refused = {**row, "bad_probe": {}}
    assert "| k | NVIDIA | T | – | 64 | launcher |" in rendering.table([refused])  # control: a checked refusal


def test_an_ascend_grid_refusal_without_a_recorded_grid_is_still_a_grid_crossing():
    said = 'grid should be less than 65536! You can try "export TRITON_ALL_BLOCKS_PARALLEL=1"'
    crossed = limits.crossings(Observation("ascend", {}, launch_errors=[["_attn_fwd", said]]))
    assert crossed and crossed[0].limit == limits.GRID and "65536" in crossed[0].evidence
    assert not limits.crossings(Observation("ascend", {}, launch_errors=[["_attn_fwd", "grid is fine"]]))  # control


def test_a_not_checked_size_keeps_the_launchers_words():
    said = "the launcher raised ForkedCaseError: KeyError: 'num_vectorcore'\n(in its forked child)"
    row = {**_row(Observation("cuda", {})), "bad_probe": {"not_checked": "the launch compiled nothing",
                                                         "launch_errors": [["k", said]]}}
    assert "the launch compiled nothing (the launcher raised ForkedCaseError: KeyError: 'num_vectorcore')" in \
        rendering.sentence(row)
    quiet = {**row, "bad_probe": {"not_checked": "the launch compiled nothing"}}
    assert rendering.sentence(quiet).endswith("not checked: the launch compiled nothing.")  # control: nothing said
