#!/usr/bin/env bash
# Runs on the GPU machine from the repository root (about 3 minutes on an H200):
#   1. the Jacobi GPU test (kbk, graph, cusparse x fp64/fp32 vs the CPU reference on the real and
#      generated matrices; zero diagonal, non-square and diverging inputs end with a message),
#   2. the Jacobi suite (configs/jacobi/suite.json), fp64 then fp32 -> $OUT/jacobi.jsonl.
# Builds apiary-jacobi and the test into $BUILD first if they are missing.
# Environment:
#   OUT                  output directory (required)
#   APIARY_MATRIX_DIR    directory with the real .mtx files (default: data/matrices, then ../shared/data/matrices)
#   BUILD                build directory (default build/release)
#   JACOBI_REPEATS       timed solves per version (default 3)
#   JACOBI_MAX_ITER      iteration cap (default 20000; the 1e6-row Laplacians reach it)
#   JACOBI_MAX_NNZ       skip suite matrices above this size (default: none)
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
MAXITER=${JACOBI_MAX_ITER:-20000}
MAXNNZ=()
[ -n "${JACOBI_MAX_NNZ:-}" ] && MAXNNZ=(--max-nnz "$JACOBI_MAX_NNZ")
APP="$BUILD/apps/jacobi/apiary-jacobi"
TEST="$BUILD/tests/gpu/jacobi/apiary_jacobi_gpu_test"
status=0

if [ ! -x "$APP" ] || [ ! -x "$TEST" ]; then
  echo "== building apiary-jacobi and apiary_jacobi_gpu_test in $BUILD"
  export PATH=/usr/local/cuda/bin:$PATH
  { [ -f "$BUILD/build.ninja" ] || cmake --preset release -B "$BUILD" >/dev/null; } &&
    cmake --build "$BUILD" --target apiary-jacobi apiary_jacobi_gpu_test -j"$(nproc)" || exit 1
fi

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt" || true
echo "== jacobi GPU test (matrices from $APIARY_MATRIX_DIR)"
start=$(date +%s)
if ! "$TEST" 2>&1 | tee "$OUT/jacobi_gpu_test.log"; then status=1; fi
echo "   test took $(( $(date +%s) - start )) s"

rm -f "$OUT/jacobi.jsonl"
for prec in fp64 fp32; do
  echo "== Jacobi suite, $prec (max $MAXITER iterations, $REPEATS repeats)"
  start=$(date +%s)
  "$APP" --suite configs/jacobi/suite.json --matrix-dir "$APIARY_MATRIX_DIR" --precision "$prec" \
    --max-iter "$MAXITER" --repeats "$REPEATS" "${MAXNNZ[@]}" --json "$OUT/jacobi.jsonl" \
    2>&1 | tee "$OUT/jacobi_$prec.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  echo "   $prec suite took $(( $(date +%s) - start )) s"
done

echo "== results in $OUT/jacobi.jsonl (status $status)"
exit $status
