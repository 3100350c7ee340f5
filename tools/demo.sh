#!/usr/bin/env bash
# The main job: set up, build (Release, sm_90a), run the thesis's 11-type synthetic task tree
# with phases and with individual dependencies on the GPU, check both traces, and draw the
# scheduling plots (one lane per SM, coloured by task type, phase boundaries marked).
# Output: out/demo/*.trace.json (open in ui.perfetto.dev) and out/demo/*.png.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
bash tools/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target apiary-synth -j "$(nproc)"
out=out/demo
mkdir -p "$out"
for mode in phases individual; do
  ./build/release/apps/synthetic/apiary-synth configs/synthetic/thesis11_$mode.json \
    --trace "$out/thesis11_$mode.trace.json" --plot "$out/thesis11_$mode.png"
done
python3 tools/apiary_plot.py --compare "$out/thesis11_phases.trace.json" "$out/thesis11_individual.trace.json" \
  --labels "phases" "individual dependencies" -o "$out/thesis11_compare.png"
echo "demo: plots in $out/ (thesis11_phases.png, thesis11_individual.png, thesis11_compare.png)"
