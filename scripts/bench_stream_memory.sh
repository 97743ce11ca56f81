#!/usr/bin/env bash
# Peak resident memory of `attn-viz model --stream-layers` on one 7B-shaped Llama (dim 4096, 32
# layers, 32 heads, FFN 11008, vocab 32000, random weights) in two containers: a Hugging Face folder
# of BF16 safetensors (scripts/make_synthetic_hf.py) and an F16 GGUF file
# (scripts/make_synthetic_gguf.py), each 13.5 GB. Both stream their blocks from the mapped file, so
# both should peak at about one block's float32 weights plus the embeddings, classifier and one
# layer's maps (docs/streaming.md). Prints the CPU, the date and each peak (/usr/bin/time's maximum
# resident set size).
# Usage: scripts/bench_stream_memory.sh
# BENCH_MODEL_DIR: where the two models are made (kept there for the next run); default a scratch
# directory removed at the end (27 GB). ATTN_VIZ: the binary (default build/attn-viz).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ATTN_VIZ:-$root/build/attn-viz}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=${BENCH_MODEL_DIR:-$work}
mkdir -p "$dir"
text="Once upon a time, there was a little girl named Lily. She loved to play outside in the sun."

[[ -f $dir/llama7b-f16.gguf ]] ||
  /usr/bin/python3 "$root/scripts/make_synthetic_gguf.py" --out "$dir/llama7b-f16.gguf" --type F16 >/dev/null
[[ -f $dir/llama7b-hf/config.json ]] ||
  /usr/bin/python3 "$root/scripts/make_synthetic_hf.py" --out "$dir/llama7b-hf" --dtype BF16 >/dev/null
echo "CPU: $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}'), $(nproc) cores; date: $(date -u +%Y-%m-%d)"
for model in "$dir/llama7b-hf" "$dir/llama7b-f16.gguf"; do
  /usr/bin/time -f "%e %M" -o "$work/time" "$bin" model -q --force --stream-layers --model "$model" --text "$text" \
    --out "$work/out"
  read -r wall rss_kb <"$work/time"
  awk -v m="$(basename "$model")" -v wall="$wall" -v rss="$rss_kb" \
    'BEGIN {printf "%s: --stream-layers peak RSS %.2f GB (%d MiB), wall %.0f s\n", m, rss / 1048576, rss / 1024, wall}'
  rm -rf "$work/out"
done
