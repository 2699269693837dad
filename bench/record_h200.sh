#!/usr/bin/env bash
# Record real workloads' Triton launches on a GPU node (issue 41), then replay the bundles on the CPU tiers.
#
# On the H200 (from the worktree root; the device has no network, so everything below travels with it):
#   - a CUDA venv with torch + upstream triton, e.g. the cuda session's: PY=.nox/cuda/bin/python
#   - in it: pip install safetensors pytest einops && pip install --no-deps fla-core==0.6.0 liger-kernel==0.8.5
#     (wheels: fla-core 0.6.0, liger-kernel 0.8.5, safetensors, einops; torch/triton as the cuda session has them)
#   - the test sources, which the wheels do not ship, copied under ext/ (untracked; never committed):
#       ext/fla/tests/ops/test_gated_delta.py (+ what it imports from tests/) : flash-linear-attention at 0.6.0
#       ext/liger/test/transformers/test_rms_norm.py, test_swiglu.py, test/utils.py : Liger-Kernel at v0.8.5
#       ext/triton/test_core.py and ext/triton/conftest.py : triton's python/test/unit/language/test_core.py and
#         python/test/unit/conftest.py (its `device` fixture) at the installed triton's tag
#
#   bash bench/record_h200.sh              # writes reports/bundles-h200/{fla,liger,test_core}, and overhead figures
#
# Back here (CPU), for each bundle B and each tier T in interpret cuda-compile ascend-compile ascend-lowered:
#   nox -s T -- --replay reports/bundles-h200/B --results-dir reports/replay-B-T
#   python -m parity replay-summary reports/bundles-h200/B reports/replay-B-*
set -u
ROOT=$(pwd)
PY=$(realpath -m "${PY:-.nox/cuda/bin/python}")
OUT=$(realpath -m "${OUT:-reports/bundles-h200}")
EXT=$(realpath -m "${EXT:-ext}")
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
TIMEOUT=${TIMEOUT:-150}  # per recorded command, seconds: the device lends 10 minutes a command
mkdir -p "$OUT"
record() {  # name, then the command
  local name=$1; shift
  rm -rf "${OUT:?}/$name"
  local t0=$(date +%s.%N)
  timeout "$TIMEOUT" "$PY" -m parity record --out "$OUT/$name" -- "$@"
  local t1=$(date +%s.%N)
  timeout "$TIMEOUT" "$@" >/dev/null 2>&1
  local t2=$(date +%s.%N)
  echo "overhead $name: recorded $(echo "$t1 - $t0" | bc) s, plain $(echo "$t2 - $t1" | bc) s (plain second: warm caches)"
}
"$PY" -c "import torch, triton, safetensors; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(0))"
# The tests run from a copy OUTSIDE the parity checkout: inside it, pytest takes parity's pyproject as rootdir and
# loads parity's conftest and plugin (TRITON_INTERPRET=1), so the "GPU" recording would run under the interpreter
# (`parity record` refuses that; its last lines say "Recorded under the interpreter" or "without the interpreter").
STAGE=$(mktemp -d /tmp/parity-record-ext.XXXXXX)
cp -r "$EXT"/. "$STAGE"/
unset TRITON_INTERPRET
[ -d "$STAGE/fla" ] && (cd "$STAGE/fla" && PYTHONPATH="$ROOT:." record fla "$PY" -m pytest -x -q tests/ops/test_gated_delta.py -k "not backward")
[ -d "$STAGE/liger" ] && (cd "$STAGE/liger" && PYTHONPATH="$ROOT:." record liger "$PY" -m pytest -x -q test/transformers/test_rms_norm.py test/transformers/test_swiglu.py)
[ -f "$STAGE/triton/test_core.py" ] && (cd "$STAGE/triton" && record test_core "$PY" -m pytest -q -p no:cacheprovider test_core.py \
  -k "test_bin_op or test_unary_op or test_reduce or test_dot or test_load_store or test_where or test_cast" --maxfail=1000)
ls -la "$OUT"
