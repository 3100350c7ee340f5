#!/usr/bin/env bash
# On the GPU machine, from the repo root with a prebuilt build/release: every gpu-labelled
# test, the runtime benchmark, and the thesis examples' traces, all under $OUT.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; git rev-parse --short HEAD 2>/dev/null; } | tee "$out/device.txt"
ctest --test-dir build/release -L gpu --output-on-failure > "$out/ctest_gpu.log" 2>&1
grep -E "tests passed|Failed|\*\*\*|Passed" "$out/ctest_gpu.log" | tail -60
for config in thesis4_phases thesis4_individual thesis11_phases thesis11_individual; do
  ./build/release/apps/synthetic/apiary-synth configs/synthetic/$config.json --trace "$out/$config.trace.json" \
    > /dev/null 2>&1 || echo "FAILED: $config"
done
OUT=$out bash tools/gpu/bench_runtime.sh > /dev/null 2>&1; tail -n 8 "$out/bench_runtime.log"
rm -f "$out/bench_runtime.log.tmp"
