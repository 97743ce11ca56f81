#!/usr/bin/env bash
# Sets up, builds, and runs attn-viz on the sample layer in data/demo (planted heads: previous-token,
# first-token sink, uniform, self, and two identical heads), writing to out/demo/ and
# out/demo-attention.npy. Installs only what the CLI needs and builds only the CLI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" build
"$root/scripts/build.sh" --target attn-viz
out=$root/out/demo
"$root/build/attn-viz" run --weights "$root/data/demo/weights.json" --input "$root/data/demo/input.json" \
  --out "$out" --force --html --dump-attention "$root/out/demo-attention.npy"
echo
echo "pictures: $out/head_*.png (one per head), $out/overview.png, $out/correlation.png"
echo "report:   $out/report.html    statistics: $out/stats.json, $out/heads.csv"
echo "maps:     $root/out/demo-attention.npy (float32 [H, T, T], numpy.load reads it)"
