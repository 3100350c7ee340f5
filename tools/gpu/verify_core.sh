#!/usr/bin/env bash
# On the GPU machine, from the repo root with a prebuilt build/release: runs every
# gpu-labelled test and records the thesis examples' traces under $OUT.
set -uo pipefail
out=${OUT:-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/device.txt"
git rev-parse --short HEAD 2>/dev/null | tee -a "$out/device.txt"
ctest --test-dir build/release -L gpu --output-on-failure 2>&1 | tee "$out/ctest_gpu.log" | tail -40
for config in thesis4_phases thesis4_individual thesis11_phases thesis11_individual; do
  ./build/release/apps/synthetic/apiary-synth configs/synthetic/$config.json --trace "$out/$config.trace.json" \
    > "$out/$config.log" 2>&1 || echo "FAILED: $config"
done
tail -n 3 "$out"/thesis*.log
