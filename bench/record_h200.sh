#!/usr/bin/env bash
# Record real workloads' Triton launches on a GPU node (issue 41); the bundles are then replayed on the CPU tiers.
# What ran on the H200 on 2026-12-04 (docs/record-replay-2026-12-04.md). The third device session (rec41b) ran
# `ONLY="fla flaggems liger-ce test_core"`, then `ONLY="fla flaggems"` with the StridedBuffer fix: fla and test_core again with the recorder's autotune, alias and
# decorator fixes, FlagGems' own op tests, and Liger's cross-entropy at the shapes that fit a bundle.
#
# EXT holds the sources, which no wheel ships (untracked; never committed):
#   EXT/triton/test_core.py   the functions of upstream Triton's python/test/unit/language/test_core.py named in
#                             bench/record_harness/test_core_functions.txt (commit 0072ae0b), with its header
#   EXT/fla/{fla,tests}       flash-linear-attention's package and tests/conftest.py, tests/ops/test_gdn.py
#   EXT/liger/{src,test}      Liger-Kernel's src/liger_kernel and test/{__init__,conftest,utils}.py, test/transformers/*.py
#                             (without test/__init__.py, `test.utils` resolves to Python's own `test` package)
#   EXT/lightllm/lightllm     LightLLM's seven kernel modules named in bench/record_harness/lightllm_decode_loop.py,
#                             with empty package __init__s (the real ones import the whole engine)
#   EXT/flaggems/{pytest.ini,tests/}   FlagGems v5.0.2's pytest.ini and tests/{__init__,conftest,accuracy_utils}.py
#                             plus the op test files in FLAGGEMS_TESTS below (flag_gems itself: its 5.0.2 wheel)
# The harness (this repo's): bench/record_harness/{tc_conftest.py,sample_plugin.py,lightllm_decode_loop.py}.
#
#   EXT=<dir> OUT=<dir> [ONLY="fla flaggems ..."] bash bench/record_h200.sh
# Each bundle goes to OUT/<name>.tar.xz as it finishes (split into 15 MB parts <name>.tar.xz.part-aa, -ab, ...
# when larger: `cat <name>.tar.xz.part-* | tar -xJ`); the log is OUT/log.txt.
#
# Back here, for each bundle B and tier T in interpret cuda-compile ascend-compile ascend-lowered:
#   pytest suites --backend=T --replay B --results-dir R-T    (nox -s T -- --replay B)
#   python -m parity replay-summary B R-*;  python bench/replay_groups.py --source EXT/triton/test_core.py B R-*
set -u
ROOT=$(pwd)
PY=${PY:-python3}
OUT=$(realpath -m "${OUT:-reports/bundles-h200}")
B=$(mktemp -d /tmp/parity-bundles.XXXXXX)
ONLY=${ONLY:-test_core lightllm liger liger-ce fla flaggems bench}
want() { case " $ONLY " in *" $1 "*) return 0;; esac; return 1; }
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export FLA_DISABLE_BACKEND_DISPATCH=1 XZ_OPT=-T0
mkdir -p "$OUT"
exec > >(tee -a "$OUT/log.txt") 2>&1
# The tests run from a copy OUTSIDE the parity checkout: inside it, pytest takes parity's pyproject as rootdir and
# loads parity's conftest and plugin (the interpreter tier), and `parity record` refuses that.
STAGE=$(mktemp -d /tmp/parity-record-ext.XXXXXX)
cp -r "${EXT:?set EXT to the sources}"/. "$STAGE"/
cp bench/record_harness/sample_plugin.py "$STAGE"/
cp bench/record_harness/tc_conftest.py "$STAGE/triton/conftest.py"
cp bench/record_harness/lightllm_decode_loop.py "$STAGE/lightllm/decode_loop.py"
export PYTHONPATH="$ROOT:$STAGE:$STAGE/liger/src${PYTHONPATH:+:$PYTHONPATH}"  # after any --target site of wheels
"$PY" -c "import torch, triton, safetensors; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
rec() {  # name, seconds, budget, dir, command...
  local name=$1 lim=$2 budget=$3 dir=$4; shift 4
  local t0=$SECONDS
  rm -rf "${B:?}/$name"
  echo "=== $name ($(date -u +%T)): $*"
  (cd "$dir" && timeout -k 15 -s INT "$lim" "$PY" -m parity record --budget "$budget" --out "$B/$name" -- "$@" 2>&1 | tail -25)
  echo "=== $name took $((SECONDS - t0)) s (limit $lim)"
}
pack() {  # archive name, bundle dirs...: OUT/<name>.tar.xz, split into 15 MB parts when larger (a run's per-file cap)
  local name=$1; shift
  (cd "$B" && tar -cJf "$OUT/$name.tar.xz" "$@") || return 0
  if [ "$(stat -c %s "$OUT/$name.tar.xz")" -gt 15000000 ]; then
    split -b 15000000 "$OUT/$name.tar.xz" "$OUT/$name.tar.xz.part-" && rm "$OUT/$name.tar.xz"
  fi
  ls -la "$OUT/$name".tar.xz*
}
# fla's GDN op tests (chunk and fused_recurrent, forward and backward), the small shapes
# (the first call's 130 s cut it in its third test, 18 launches and 21 MB kept: 260 s and 60M in the second)
want fla && rec fla 260 60M "$STAGE/fla" "$PY" -m pytest -q -p no:cacheprovider tests/ops/test_gdn.py \
  -k "B1-T63-H1-HV1-D64 or B2-T75-H4-HV4-D64 or B2-T500-H3-HV3-D60" && pack fla fla
# FlagGems' own op tests (v5.0.2, --quick shapes), two parametrizations of each test function, its autotune picks
# in memory (FLAGGEMS_DB_URL), not in ~/.flaggems. No xdist: FlagGems' conftest keeps per-test results in the worker
# and reads them in pytest_runtest_logreport, which under xdist runs in the controller (INTERNALERROR, KeyError).
FLAGGEMS_TESTS="abs exp gelu sigmoid rsqrt add mul div pow sum amax argmax cumsum softmax mean layer_norm rms_norm"
want flaggems && SAMPLE_PER_TEST=2 FLAGGEMS_DB_URL=sqlite:// rec flaggems 220 14M "$STAGE/flaggems" "$PY" -m pytest \
  -q -p no:cacheprovider -p sample_plugin --quick $(for t in $FLAGGEMS_TESTS; do echo "tests/test_$t.py"; done) \
  && pack flaggems flaggems
# Liger-Kernel's cross-entropy at the shapes that fit a bundle: test_correctness_functional (B, T, V up to 9, 7, 41).
# Its other tests take a 32,000 vocabulary, at least 81 MB of logits per launch (3 x 423 x 32000 bf16).
want liger-ce && SAMPLE_PER_TEST=0 rec liger-cross_entropy 60 4M "$STAGE/liger" "$PY" -m pytest -q -p no:cacheprovider \
  test/transformers/test_cross_entropy.py -k test_correctness_functional && pack liger-ce liger-cross_entropy
# upstream Triton's test_core: 4 parametrizations of each test function, 8 xdist workers
want test_core && SAMPLE_PER_TEST=4 rec test_core 130 12M "$STAGE/triton" "$PY" -m pytest -q -p no:cacheprovider \
  -p sample_plugin -n 8 test_core.py && pack test_core test_core
# LightLLM's kernels in a serving loop (6 decode steps, three requests, a paged KV cache)
want lightllm && rec lightllm 40 12M "$STAGE/lightllm" "$PY" decode_loop.py 6 && pack lightllm lightllm
# Liger-Kernel's own op tests, two parametrizations of each test function (Liger ead96b61's shapes: 3.5 MB kept
# nothing on 2026-12-05; 16 MB kept rms_norm's 12 launches and swiglu's 7)
if want liger; then
  for t in rms_norm swiglu rope; do
    SAMPLE_PER_TEST=2 rec "liger-$t" 55 16M "$STAGE/liger" "$PY" -m pytest -q -p no:cacheprovider -p sample_plugin \
      "test/transformers/test_$t.py"
  done
  pack liger liger-rms_norm liger-swiglu liger-rope
fi
# recording overhead (parity's bench) on the LightLLM loop
want bench && (cd "$ROOT" && PYTHONPATH="$ROOT:$STAGE/lightllm" timeout -k 10 100 "$PY" bench/record_replay.py \
  --repeats 2 --backend cuda --cmd "$PY $STAGE/lightllm/decode_loop.py 20")
echo "=== done ($(date -u +%T))"
ls -la "$OUT"
