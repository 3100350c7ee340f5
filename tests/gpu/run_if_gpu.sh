#!/usr/bin/env bash
# Runs a command if this machine has an NVIDIA GPU; otherwise exits 77, which ctest reports
# as "skipped" (SKIP_RETURN_CODE). Usage: run_if_gpu.sh [--sanitizer TOOL] COMMAND...
set -u
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: no NVIDIA GPU on this machine"
  exit 77
fi
if [ "${1:-}" = "--sanitizer" ]; then
  tool=$2
  shift 2
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [ ! -x "$sanitizer" ]; then
    echo "SKIPPED: compute-sanitizer not found"
    exit 77
  fi
  exec "$sanitizer" --tool "$tool" --error-exitcode 99 "$@"
fi
exec "$@"
