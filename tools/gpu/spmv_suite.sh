#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with a prebuilt build/release:
#   1. the spmv GPU tests (every schedule x fp32/fp64 vs the CPU reference, visit correctness),
#   2. the SpMV suite (configs/spmv/suite.json) -> $OUT/spmv.jsonl,
#   3. the Busato-Bombieri visit benchmark (configs/spmv/visit.json) -> $OUT/visit.jsonl.
# Environment:
#   OUT                  output directory (required)
#   APIARY_MATRIX_DIR    directory with the real .mtx files (default: data/matrices, then ../shared/data/matrices)
#   BUILD                build directory (default build/release)
#   SPMV_REPEATS         timed repeats per measurement (default 15; 7 for >= 1e7 non-zeros)
#   SPMV_MAX_NNZ         skip suite matrices above this size (default: none)
#   SPMV_RUNS            whole-suite runs appended to spmv.jsonl (default 1); the report takes
#                        each measurement's median over the runs (small matrices vary by tens
#                        of percent between lent machines and runs, docs/spmv.md)
# Exit status: non-zero if a test or any result check failed (JSON is still written).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the output directory}"
BUILD=${BUILD:-build/release}
if [ -z "${APIARY_MATRIX_DIR:-}" ]; then
  if [ -d data/matrices ]; then APIARY_MATRIX_DIR=$PWD/data/matrices; else APIARY_MATRIX_DIR=$PWD/../shared/data/matrices; fi
fi
export APIARY_MATRIX_DIR
mkdir -p "$OUT"
REPEATS=${SPMV_REPEATS:-15}
LARGE=$(( REPEATS / 2 > 3 ? REPEATS / 2 : 3 ))
MAXNNZ=()
[ -n "${SPMV_MAX_NNZ:-}" ] && MAXNNZ=(--max-nnz "$SPMV_MAX_NNZ")
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt" || true
echo "== spmv GPU tests (matrices from $APIARY_MATRIX_DIR)"
start=$(date +%s)
if ! "$BUILD/tests/gpu/spmv/apiary_spmv_gpu_test" 2>&1 | tee "$OUT/spmv_gpu_test.log"; then status=1; fi
echo "   tests took $(( $(date +%s) - start )) s"

echo "== SpMV suite"
start=$(date +%s)
rm -f "$OUT/spmv.jsonl" "$OUT/spmv.log"
for run in $(seq 1 "${SPMV_RUNS:-1}"); do
  "$BUILD/apps/spmv/apiary-spmv" --suite configs/spmv/suite.json --matrix-dir "$APIARY_MATRIX_DIR" \
    --repeats "$REPEATS" --large-repeats "$LARGE" "${MAXNNZ[@]}" --json "$OUT/spmv.jsonl" 2> >(tee -a "$OUT/spmv.log" >&2) || status=1
done
echo "   suite took $(( $(date +%s) - start )) s (${SPMV_RUNS:-1} run(s))"

echo "== visit benchmark"
start=$(date +%s)
rm -f "$OUT/visit.jsonl"
"$BUILD/apps/spmv/apiary-visit" --suite configs/spmv/visit.json \
  --repeats "$REPEATS" --large-repeats "$LARGE" --json "$OUT/visit.jsonl" 2> >(tee "$OUT/visit.log" >&2) || status=1
echo "   visit took $(( $(date +%s) - start )) s"

echo "== results in $OUT (status $status); render with: python3 tools/spmv_report.py --spmv $OUT/spmv.jsonl --visit $OUT/visit.jsonl"
exit $status
