#!/usr/bin/env bash
# Benchmarks attn-viz end to end on a BERT-base-sized layer (D=768, H=12, T=512, tensors as .npy):
# prints the whole-run time (median of N runs) and the attention stage's GFLOP/s.
#   scripts/bench.sh [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
"$root/scripts/setup.sh" >/dev/null
"$root/scripts/build.sh" >/dev/null
bin=$root/build/attn-viz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%Y-%m-%d)"
/usr/bin/python3 "$root/scripts/make_layer.py" --out "$work/layer" --d-model 768 --heads 12 --tokens 512
times=()
for ((i = 0; i < runs; i++)); do
  start=$(date +%s.%N)
  "$bin" run -q --timings --weights "$work/layer/weights.json" --input "$work/layer/input.json" \
    --out "$work/out" 2>"$work/timings.txt"
  end=$(date +%s.%N)
  times+=("$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
printf 'D=768 H=12 T=512: whole run %.1f ms (median of %d)\n' "$(awk -v m="$median" 'BEGIN {print m * 1000}')" "$runs"
echo "last run's stages:"
cat "$work/timings.txt"
