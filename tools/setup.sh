#!/usr/bin/env bash
# Installs what apiary needs to build and test, from Debian packages and PyPI (pinned).
# Idempotent; on machines without apt (or where everything is present) it only checks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

packages=(cmake ninja-build g++ catch2 libboost-dev libspdlog-dev libfmt-dev nlohmann-json3-dev python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing Debian packages: ${missing[*]} (install them, or run as root)" >&2
    exit 1
  fi
fi

command -v nvcc >/dev/null 2>&1 || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null 2>&1 || { echo "setup: nvcc not found: install the CUDA toolkit (13.0) at /usr/local/cuda" >&2; exit 1; }

# Python tools (plots, trace conversion): pinned versions.
if ! python3 -c "import matplotlib, numpy" >/dev/null 2>&1; then
  python3 -m pip install -q -r "$here/requirements.txt"
fi
# cuobjdump (not in the CUDA 13.0 toolkit here) for the kernel register-budget test; without it
# that test is skipped, so a failed download is a warning, not an error.
python3 "$here/kernel_registers.py" --fetch >/dev/null || echo "setup: no cuobjdump; the register-budget test will be skipped" >&2
echo "setup: ok"
