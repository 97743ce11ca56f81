#!/usr/bin/env bash
# Sets up, builds, and runs attn-viz on the sample layer in data/demo (planted heads: previous-token,
# first-token sink, uniform, self, and two identical heads), writing to out/demo/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
out=$root/out/demo
"$root/build/attn-viz" run --weights "$root/data/demo/weights.json" --input "$root/data/demo/input.json" \
  --out "$out" --html --dump-attention "$root/out/demo-attention.npy"
echo
echo "pictures: $out/head_*.png (one per head), $out/overview.png, $out/correlation.png"
echo "report:   $out/report.html    statistics: $out/stats.json, $out/heads.csv"
