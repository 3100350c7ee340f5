#!/usr/bin/env bash
# Runs on the GPU machine from the repository root:
#   1. the Jacobi GPU test (baselines and task-graph versions under every scheduler x fp64/fp32
#      vs the CPU reference; zero diagonal, non-square and diverging inputs end with a message),
#      unless SKIP_TEST=1;
#   2. the Jacobi suite (configs/jacobi/suite.json) for each precision: matrices up to
#      JACOBI_SPLIT_NNZ non-zeros to convergence (at most JACOBI_MAX_ITER iterations), the larger
#      ones for JACOBI_LARGE_MAX_ITER iterations (they measure the per-iteration cost) ->
#      $OUT/jacobi.jsonl. Report: tools/jacobi_report.py $OUT/jacobi.jsonl.
# Builds apiary-jacobi and the test into $BUILD first if they are missing.
# Environment:
#   OUT                    output directory (required)
#   APIARY_MATRIX_DIR      directory with the real .mtx files (default: data/matrices, then ../shared/data/matrices)
#   BUILD                  build directory (default build/release)
#   JACOBI_REPEATS         timed solves per version (default 3)
#   JACOBI_VERSIONS        --version list (default all)
#   JACOBI_SCHEDULERS      --scheduler list for the task versions (default all)
#   JACOBI_PRECISIONS      default "fp64 fp32"
#   JACOBI_MAX_ITER        iteration cap up to JACOBI_SPLIT_NNZ non-zeros (default 20000)
#   JACOBI_SPLIT_NNZ       default 2000000
#   JACOBI_LARGE_MAX_ITER  iteration cap above it (default 1000)
#   JACOBI_CHECK_EVERY     residual check interval (default 1: exact reference iteration counts)
# Exit status: non-zero if the test or any result check failed (JSON is still written).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the output directory}"
BUILD=${BUILD:-build/release}
if [ -z "${APIARY_MATRIX_DIR:-}" ]; then
  if [ -d data/matrices ]; then APIARY_MATRIX_DIR=$PWD/data/matrices; else APIARY_MATRIX_DIR=$PWD/../shared/data/matrices; fi
fi
export APIARY_MATRIX_DIR
mkdir -p "$OUT"
REPEATS=${JACOBI_REPEATS:-3}
VERSIONS=${JACOBI_VERSIONS:-all}
SCHEDULERS=${JACOBI_SCHEDULERS:-all}
PRECISIONS=${JACOBI_PRECISIONS:-fp64 fp32}
MAXITER=${JACOBI_MAX_ITER:-20000}
SPLIT=${JACOBI_SPLIT_NNZ:-2000000}
LARGE_MAXITER=${JACOBI_LARGE_MAX_ITER:-1000}
CHECK_EVERY=${JACOBI_CHECK_EVERY:-1}
APP="$BUILD/apps/jacobi/apiary-jacobi"
TEST="$BUILD/tests/gpu/jacobi/apiary_jacobi_gpu_test"
status=0

if [ ! -x "$APP" ] || { [ "${SKIP_TEST:-0}" != 1 ] && [ ! -x "$TEST" ]; }; then
  echo "== building apiary-jacobi and apiary_jacobi_gpu_test in $BUILD"
  export PATH=/usr/local/cuda/bin:$PATH
  { [ -f "$BUILD/build.ninja" ] || cmake --preset release -B "$BUILD" >/dev/null; } &&
    cmake --build "$BUILD" --target apiary-jacobi apiary_jacobi_gpu_test -j"$(nproc)" || exit 1
fi

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt" || true
if [ "${SKIP_TEST:-0}" != 1 ]; then
  echo "== jacobi GPU test (matrices from $APIARY_MATRIX_DIR)"
  start=$(date +%s)
  if ! "$TEST" > "$OUT/jacobi_gpu_test.log" 2>&1; then status=1; fi
  tail -1 "$OUT/jacobi_gpu_test.log"
  echo "   test took $(( $(date +%s) - start )) s"
fi

rm -f "$OUT/jacobi.jsonl"
for prec in $PRECISIONS; do
  for part in small large; do
    if [ $part = small ]; then range=(--max-nnz "$SPLIT"); cap=$MAXITER; else range=(--min-nnz $((SPLIT + 1))); cap=$LARGE_MAXITER; fi
    echo "== Jacobi suite, $prec, $part matrices (max $cap iterations, $REPEATS repeats)"
    start=$(date +%s)
    "$APP" --suite configs/jacobi/suite.json --matrix-dir "$APIARY_MATRIX_DIR" --precision "$prec" \
      --version "$VERSIONS" --scheduler "$SCHEDULERS" --check-every "$CHECK_EVERY" \
      --max-iter "$cap" --repeats "$REPEATS" "${range[@]}" --json "$OUT/jacobi.jsonl" \
      > "$OUT/jacobi_${prec}_$part.log" 2>&1
    [ "$?" -eq 0 ] || status=1
    grep -E "FAIL|error" "$OUT/jacobi_${prec}_$part.log" | head -20
    echo "   took $(( $(date +%s) - start )) s"
  done
done

echo "== results in $OUT/jacobi.jsonl (status $status)"
exit $status
