#!/usr/bin/env bash
# The scheduler comparison (docs/benchmarks.md, "Schedulers"): every benchmark group of
# apiary-bench-runtime under each scheduler, the baselines (host launch, CUDA graph node, CUDA
# graph WHILE loop, plain kernel) once, and the 11-type synthetic tree in both modes, traced.
#   OUT=/some/dir tools/gpu/bench_schedulers.sh [extra apiary-bench-runtime arguments, e.g. --quick]
# Writes:
#   $OUT/bench_schedulers.jsonl                          one JSON object per measurement
#   $OUT/bench_schedulers.log                            everything printed, tables last
#   $OUT/thesis11_individual_<scheduler>.trace.json      one per scheduler
# One process per scheduler, each under a time limit (LIMIT seconds, default 100), so that a
# scheduler that hangs costs only its own results; the megakernel process also runs the baselines.
# Environment:
#   OUT         output directory (required)
#   BUILD       build directory (default build/release; configured with the release preset and
#               built, incrementally, every time so that the binary and its commit are current)
#   SCHEDULERS  default "megakernel timesliced timesliced_graph device_controller device_controller_wave"
#   REPEATS     timed repeats per measurement (default 5)
#   LIMIT       seconds per scheduler (default 100)
# Exit status: 0 every check passed under every scheduler, 1 otherwise, 3 no GPU.
# Render afterwards: python3 tools/bench_schedulers_report.py $OUT/bench_schedulers.jsonl --traces $OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the output directory}"
BUILD=${BUILD:-build/release}
BIN=$BUILD/apps/bench/apiary-bench-runtime
SCHEDULERS=${SCHEDULERS:-megakernel timesliced timesliced_graph device_controller device_controller_wave}
REPEATS=${REPEATS:-5}
LIMIT=${LIMIT:-100}
mkdir -p "$OUT"
LOG=$OUT/bench_schedulers.log
JSONL=$OUT/bench_schedulers.jsonl
rm -f "$JSONL" "$LOG"

# A build carried from the development machine is used as it is (SKIP_BUILD=1): the GPU
# machines have no package registry to configure a fresh build with.
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -x "$BIN" ]; then
  echo "== building $BIN" | tee -a "$LOG"
  t0=$(date +%s)
  { cmake --preset release -B "$BUILD" >/dev/null && cmake --build "$BUILD" --target apiary-bench-runtime -j "$(nproc)"; } \
    >>"$LOG" 2>&1 || { echo "build failed (see $LOG)"; tail -30 "$LOG"; exit 1; }
  echo "== build took $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
fi

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$LOG"
status=0
start=$(date +%s)
first=1
for s in $SCHEDULERS; do
  args=(--scheduler "$s" --repeats "$REPEATS" --json "$JSONL" --trace-dir "$OUT")
  [ $first = 1 ] || args+=(--no-baselines)
  t0=$(date +%s)
  echo "== scheduler $s: $BIN ${args[*]} $*" | tee -a "$LOG"
  timeout -k 10 "$LIMIT" "$BIN" "${args[@]}" "$@" >>"$LOG" 2>&1
  rc=$?
  echo "== scheduler $s: status $rc after $(( $(date +%s) - t0 )) s" | tee -a "$LOG"
  if [ $rc = 124 ] || [ $rc = 137 ]; then
    # The record the report shows for a scheduler that ran out of time.
    printf '{"benchmark":"timeout","scheduler":"%s","error":"killed after %s s (LIMIT)"}\n' "$s" "$LIMIT" >>"$JSONL"
  fi
  if [ $rc = 3 ]; then echo "no usable GPU"; tail -5 "$LOG"; exit 3; fi
  [ $rc = 0 ] || status=1
  first=0
done
echo "== all schedulers took $(( $(date +%s) - start )) s, status $status" | tee -a "$LOG"
grep -E '^(goal|best empty)' "$LOG" | tee /dev/null
echo "== render with: python3 tools/bench_schedulers_report.py $JSONL --traces $OUT"
exit "$status"
