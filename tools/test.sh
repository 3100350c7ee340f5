#!/usr/bin/env bash
# The test command: set up, build (Release, sm_90a), run every test. GPU tests run where a
# CUDA device exists and are reported as skipped elsewhere. Then the host stress tests again
# under ThreadSanitizer, and the parser mutation tests under AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
bash tools/setup.sh
jobs=${APIARY_JOBS:-$(nproc)}
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"
if [ "${APIARY_SKIP_TSAN:-0}" != 1 ]; then
  cmake --preset tsan >/dev/null
  cmake --build --preset tsan -j "$jobs"
  ctest --preset tsan
fi
if [ "${APIARY_SKIP_ASAN:-0}" != 1 ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ctest --preset asan
fi
