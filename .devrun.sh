set -x
python3 -m pip install -q --no-index --no-deps --target .site .nw/*.whl .whl/*.whl
export PYTHONPATH=$PWD/.site
S=$SECONDS
PARITY_LIBRARIES=all timeout 300 python3 -m nox --no-venv --no-install -s cuda -- --results-dir /tmp/libs 2>&1 | tail -45
echo "LIBS_WALL $((SECONDS-S))"
mkdir -p $OUT/libs $OUT/npu
cp /tmp/libs/REPORT.md /tmp/libs/results.jsonl $OUT/libs/
S=$SECONDS
PYTHONPATH=$PWD/.site:$PWD/.snapshots/gdn-tri-inverse/src:$PWD/.snapshots/mojo_opset timeout 150 python3 -m pytest suites --backend=cuda --kernels libraries.gdn_npu,libraries.mojo_opset --level quick -n 8 -q -p no:cacheprovider --results-dir /tmp/npu 2>&1 | tail -30
echo "NPU_WALL $((SECONDS-S))"
cp /tmp/npu/REPORT.md /tmp/npu/results.jsonl $OUT/npu/
S=$SECONDS
timeout 130 python3 bench/perf_targets.py --json $OUT/perf_targets.json 2>&1 | tail -40
echo "BENCH_WALL $((SECONDS-S))"
