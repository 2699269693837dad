python3 -m pip install -q --no-index --no-deps --target .site .nw/*.whl .whl/*.whl
export PYTHONPATH=$PWD/.site
mkdir -p $OUT/libs $OUT/npu
S=$SECONDS
PARITY_LIBRARIES=all timeout -s INT 230 python3 -m nox --no-venv --no-install -s cuda -- --results-dir /tmp/libs 2>&1 | grep -v Warning | tail -25
echo "LIBS_WALL $((SECONDS-S))"
ls -R /tmp/libs | head; cp /tmp/libs/REPORT.md /tmp/libs/results.jsonl $OUT/libs/ 2>/dev/null
for f in /tmp/libs/.running/*.jsonl /tmp/libs/unfinished/*.jsonl; do [ -f "$f" ] && cat "$f"; done > $OUT/libs/partial.jsonl
S=$SECONDS
PYTHONPATH=$PWD/.site:$PWD/.snapshots/gdn-tri-inverse/src:$PWD/.snapshots/mojo_opset timeout 100 python3 -m pytest suites --backend=cuda --kernels libraries.gdn_npu,libraries.mojo_opset --level quick -n 8 -q -p no:cacheprovider --results-dir /tmp/npu 2>&1 | tail -3
echo "NPU_WALL $((SECONDS-S))"
cp /tmp/npu/REPORT.md /tmp/npu/results.jsonl $OUT/npu/
