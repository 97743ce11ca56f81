#!/usr/bin/env bash
# Sets up, builds, and runs attn-viz on the sample layer in data/demo (planted heads: previous-token,
# first-token sink, uniform, self, and two identical heads), writing to out/demo/ and
# out/demo-attention.npy (--force: a run of the demo replaces the last one's). Installs only what the
# CLI needs and builds only the CLI. What attn-viz prints is kept in out/demo-output.txt too, which
# scripts/check_demo.sh compares with the sample output in README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" build
"$root/scripts/build.sh" --target attn-viz
cd "$root"  # relative paths: the output names no folder of this machine
mkdir -p out
build/attn-viz run --weights data/demo/weights.json --input data/demo/input.json \
  --out out/demo --force --html --dump-attention out/demo-attention.npy | tee out/demo-output.txt
echo
echo "pictures: out/demo/head_*.png (one per head), out/demo/overview.png, out/demo/correlation.png"
echo "report:   out/demo/report.html    statistics: out/demo/stats.json, out/demo/heads.csv"
echo "maps:     out/demo-attention.npy (float32 [H, T, T], numpy.load reads it)"
