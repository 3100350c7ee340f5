#!/usr/bin/env bash
# Runs the runtime benchmark (apps/bench) on the GPU machine, from anywhere in the repository:
#   OUT=/some/dir tools/gpu/bench_runtime.sh [apiary-bench-runtime arguments, e.g. --quick]
# Writes $OUT/bench_runtime.jsonl (one JSON object per measurement), $OUT/bench_runtime.log
# (everything the program printed, the summary table last) and $OUT/device.txt.
# Environment:
#   OUT     output directory (required)
#   BUILD   build directory (default build/release; built with the release preset if the
#           binary is missing)
# Exit status: the benchmark's (0 all checks passed, 1 a check failed, 3 no GPU).
# Render the results afterwards with: python3 tools/bench_report.py $OUT/bench_runtime.jsonl
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the output directory}"
BUILD=${BUILD:-build/release}
BIN=$BUILD/apps/bench/apiary-bench-runtime
mkdir -p "$OUT"

if [ ! -x "$BIN" ]; then
  echo "== $BIN missing: building it"
  cmake --preset release -B "$BUILD" >/dev/null && cmake --build "$BUILD" --target apiary-bench-runtime || exit 1
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/device.txt" || true
rm -f "$OUT/bench_runtime.jsonl"
start=$(date +%s)
"$BIN" --json "$OUT/bench_runtime.jsonl" "$@" 2>&1 | tee "$OUT/bench_runtime.log"
status=${PIPESTATUS[0]}
echo "== benchmark took $(( $(date +%s) - start )) s, status $status"
echo "== render with: python3 tools/bench_report.py $OUT/bench_runtime.jsonl"
exit "$status"
