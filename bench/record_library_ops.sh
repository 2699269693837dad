#!/usr/bin/env bash
# Record a library's whole op test suite on one GPU, one `parity record` per test file, several at once (issue 51).
# One bundle per test file (B/<lib>/<test file stem>), so a launch's op is the test file that made it, and a file's
# big launch stops only that file's keeping. The bundles are then joined into one (B/<lib>-all: every process's
# manifest, tensors and sources; launch ids carry their pid) and packed into OUT.
#
#   EXT=<dir> OUT=<dir> LIB=flaggems|liger|fla|lightllm [JOBS=12] [STOP_S=470] bash bench/record_library_ops.sh
#
# EXT/<lib> holds the library's tests (no wheel ships them; untracked):
#   flaggems: FlagGems v5.0.2's pytest.ini and tests/ (flagos-ai/FlagGems@v5.0.2); flag_gems itself: its 5.0.2 wheel
#   liger:    Liger-Kernel's test/{__init__,conftest,utils}.py and test/transformers/ (linkedin/Liger-Kernel@ead96b61);
#             liger_kernel itself: its 0.8.5 wheel
#   fla:      flash-linear-attention's fla/ and tests/{conftest.py,ops/} (fla-org/flash-linear-attention@bc3b101d)
#   lightllm: LightLLM's lightllm/ and unit_tests/ (ModelTC/lightllm@fc72ffab), a serving engine's kernel tests;
#             bench/record_harness/lightllm_conftest.py registers its packages bare (their __init__s import the
#             engine); the tests need frozendict; those that import flashinfer or deep_ep do not collect
# Per file: the tests' smallest shapes where the suite has a switch for them (FlagGems' --quick), at most
# SAMPLE_PER_TEST parametrizations of each test function (bench/record_harness/sample_plugin.py), --keep 1 and a
# per-file --budget. Files not started by STOP_S seconds are listed as not run. OUT gets <lib>-tests.tsv (per file:
# seconds, exit code, pytest's last line, kept launches), <lib>.tar.xz (parts of 15 MB when larger) and the log.
set -u
ROOT=$(pwd)
PY=${PY:-python3}
LIB=${LIB:?flaggems, liger, fla or lightllm}
JOBS=${JOBS:-12}
STOP_S=${STOP_S:-470}
FILE_S=${FILE_S:-150}
OUT=$(realpath -m "${OUT:-reports/bundles-$LIB}")
B=$(mktemp -d /tmp/parity-bundles.XXXXXX)
STAGE=$(mktemp -d /tmp/parity-record-ext.XXXXXX)
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export FLA_DISABLE_BACKEND_DISPATCH=1 XZ_OPT=-T0 FLAGGEMS_DB_URL=sqlite://
mkdir -p "$OUT" "$B/$LIB"
exec > >(tee -a "$OUT/$LIB-log.txt") 2>&1
# The tests run from a copy OUTSIDE the parity checkout (inside it, pytest would load parity's own conftest).
cp -r "${EXT:?set EXT to the sources}/$LIB"/. "$STAGE"/
cp bench/record_harness/sample_plugin.py "$STAGE"/
[ "$LIB" = lightllm ] && cp bench/record_harness/lightllm_conftest.py "$STAGE"/conftest.py
export PYTHONPATH="$ROOT:$STAGE${PYTHONPATH:+:$PYTHONPATH}"
case $LIB in
  flaggems) FILES=$(cd "$STAGE" && ls tests/test_*.py tests/tet_*.py tests/test_FLA/test_*.py tests/test_DSA/test_*.py)
            ARGS="--quick"; BUDGET=${BUDGET:-1500K}; export SAMPLE_PER_TEST=${SAMPLE_PER_TEST:-2};;
  liger)    FILES=$(cd "$STAGE" && ls test/transformers/test_*.py | grep -v -E 'cutedsl|cutile|cute_moe|monkey_patch|trainer_integration|auto_model|test_transformers|test_utils')
            ARGS=""; BUDGET=${BUDGET:-3M}; export SAMPLE_PER_TEST=${SAMPLE_PER_TEST:-1};;
  fla)      FILES=$(cd "$STAGE" && ls tests/ops/test_*.py tests/ops/utils/test_*.py | grep -v -E 'tilelang|backends|cache|intracard')
            ARGS=""; BUDGET=${BUDGET:-3M}; export SAMPLE_PER_TEST=${SAMPLE_PER_TEST:-1};;
  lightllm) FILES=$(cd "$STAGE" && ls unit_tests/common/*/test_*.py unit_tests/common/*/*/test_*.py unit_tests/models/*/test_*.py | grep -v -E '_speed|deepep')
            ARGS=""; BUDGET=${BUDGET:-3M}; export SAMPLE_PER_TEST=${SAMPLE_PER_TEST:-2};;
esac
"$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name(0))"
T0=$(date +%s)
one() {  # one test file under its own recording
  local f=$1 stem; stem=$(basename "$f" .py)
  if [ $(( $(date +%s) - T0 )) -gt "$STOP_S" ]; then printf '%s\t0\t-\tnot run: the recording time was spent\t0\n' "$f"; return; fi
  local t0 rc last kept; t0=$(date +%s)
  (cd "$STAGE" && timeout -k 10 -s INT "$FILE_S" "$PY" -m parity record --keep 1 --budget "$BUDGET" --out "$B/$LIB/$stem" \
    -- "$PY" -m pytest -q -p no:cacheprovider -p sample_plugin $ARGS "$f" > "$B/$stem.log" 2>&1); rc=$?
  last=$(grep -E '(passed|failed|error|skipped|no tests ran)' "$B/$stem.log" | tail -1 | tr '\t' ' ')
  kept=$(cat "$B/$LIB/$stem"/manifest-*.jsonl 2>/dev/null | grep -c '"type": "launch"')
  printf '%s\t%s\t%s\t%s\t%s\n' "$f" $(( $(date +%s) - t0 )) "$rc" "${last:-no pytest summary}" "$kept"
}
export -f one; export B STAGE LIB PY BUDGET ARGS T0 STOP_S FILE_S
echo "=== $LIB: $(echo "$FILES" | wc -l) test files, $JOBS at a time ($(date -u +%T))"
echo "$FILES" | xargs -P "$JOBS" -I{} bash -c 'one {}' > "$OUT/$LIB-tests.tsv"
T1=$(date +%s)
echo "=== recorded in $((T1 - T0)) s of wall time on the GPU"
# join: one bundle whose manifests are every process's (distinct pids), with one header. What comes back from the
# device is at most 64 MiB: while the archive is larger than CAP bytes, the largest file's bundle is left out (logged).
CAP=${CAP:-58000000}
DIRS=$(du -sb "$B/$LIB"/*/ 2>/dev/null | sort -n | cut -f2)
join() {
  local all="$B/$LIB-all"; rm -rf "$all" "$OUT/$LIB.tar.xz"; mkdir -p "$all/tensors" "$all/sources"
  for d in $DIRS; do
    [ -f "$d/bundle.json" ] || continue
    [ -f "$all/bundle.json" ] || cp "$d/bundle.json" "$all/"
    cp "$d"/manifest-*.jsonl "$all/" 2>/dev/null; cp -n "$d"/tensors/* "$all/tensors/" 2>/dev/null
    cp -n "$d"/sources/* "$all/sources/" 2>/dev/null
  done
  echo "=== bundle: $(du -sb "$all" | cut -f1) bytes, $(cat "$all"/manifest-*.jsonl | grep -c '"type": "launch"') launches kept, $(ls "$all"/manifest-*.jsonl | wc -l) processes"
  (cd "$B" && tar -cJf "$OUT/$LIB.tar.xz" "$LIB-all")
  echo "=== archive: $(stat -c %s "$OUT/$LIB.tar.xz") bytes"
}
echo "=== all files' bundles: $(du -sbc "$B/$LIB"/*/ | tail -1 | cut -f1) bytes"
join
while [ "$(stat -c %s "$OUT/$LIB.tar.xz")" -gt "$CAP" ]; do
  big=$(echo "$DIRS" | tail -1); DIRS=$(echo "$DIRS" | head -n -1)
  echo "=== left out for size: $(basename "$big") ($(du -sb "$big" | cut -f1) bytes)"; join
done
if [ "$(stat -c %s "$OUT/$LIB.tar.xz")" -gt 15000000 ]; then
  split -b 15000000 "$OUT/$LIB.tar.xz" "$OUT/$LIB.tar.xz.part-" && rm "$OUT/$LIB.tar.xz"
fi
ls -la "$OUT"
echo "=== done in $(( $(date +%s) - T0 )) s ($(date -u +%T))"
