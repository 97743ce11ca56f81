#!/usr/bin/env bash
# Issue 14's whole-model benchmark: `attn-viz model` on a synthetic Llama-7B-shaped GGUF (dim 4096,
# 32 layers, 32 heads, FFN 11008, vocab 32000, random weights from scripts/make_synthetic_gguf.py,
# generated on demand, never committed) at T = 2047 (BOS + --induction 1023 = 1 + 2 x 1023 tokens, the
# issue's T = 2048 less one), every head analysed and drawn (pooled pictures), the report streamed
# layer by layer (docs/streaming.md). Prints the
# time per layer, the forward pass's GFLOP/s against this machine's measured matmul rate (attn-viz
# bench), peak RSS and CPU time. Targets: under 10 minutes, peak RSS under 6 GB.
# Usage: scripts/bench_model7b.sh [TYPE ...]   (types Q4_K Q8_0 F16 F32; default Q4_K Q8_0)
# BENCH_GGUF_DIR: where the GGUF files are made (kept there for the next run); default a scratch
# directory removed at the end (each file is 3.8 GB Q4_K, 7.2 GB Q8_0). BENCH_KV_HEADS: 32 (as
# Llama-2-7B) or 8 (grouped-query). ATTN_VIZ: the binary (default build/attn-viz).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ATTN_VIZ:-$root/build/attn-viz}
kv=${BENCH_KV_HEADS:-32}
types=("$@")
[[ ${#types[@]} -gt 0 ]] || types=(Q4_K Q8_0)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dir=${BENCH_GGUF_DIR:-$work}
mkdir -p "$dir"
D=4096 L=32 H=32 F=11008 V=32000 T=2047

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1 /proc/loadavg); date: $(date -u +%Y-%m-%dT%H:%MZ)"
# The matmul rate now (wall clock, all cores: what the run gets under the same load) and per CPU
# second (one thread, CPU time: what the load barely moves).
matmul() { "$bin" bench --d-model 64 --heads 1 --tokens 16 --repeat 3 "$@" | awk '/^oneDNN f32 matmul/ {print $5; exit}'; }
rate=$(matmul)
cpu_rate=$(matmul --threads 1 --cpu-time)
echo "oneDNN f32 matmul 2048^3 now: $rate GFLOP/s (wall, all cores), $cpu_rate GFLOP per CPU second (one thread)"
for type in "${types[@]}"; do
  file=$dir/llama7b-$type-kv$kv.gguf
  [[ -f $file ]] || /usr/bin/python3 "$root/scripts/make_synthetic_gguf.py" --out "$file" --type "$type" --kv-heads "$kv" >/dev/null
  echo
  echo "== $type, $kv KV heads ($(du -h "$file" | cut -f1)): model --induction 1023 (T = $T) =="
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$bin" model -q --force --timings --model "$file" --induction 1023 \
    --out "$work/out" 2>"$work/timings"
  sed 's/^/  /' "$work/timings"
  read -r wall user sys rss_kb <"$work/time"
  forward=$(awk '$1 == "forward" {print $2 / 1000}' "$work/timings")
  awk -v wall="$wall" -v cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" -v rss="$rss_kb" -v fwd="$forward" \
    -v rate="$rate" -v cpu_rate="$cpu_rate" -v L=$L -v flop="$("$root/scripts/forward_flops.sh" $D $L $H "$kv" $F $V $T)" 'BEGIN {
      printf "wall %.0f s (%.1f min; target < 10 min), %.1f s per layer, of which forward %.1f s\n", wall, wall / 60, wall / L, fwd / L
      printf "forward %.2f TFLOP in %.0f s: %.1f GFLOP/s = %.0f%% of the matmul rate measured now (%s GFLOP/s)\n",
        flop / 1e12, fwd, flop / fwd / 1e9, 100 * flop / fwd / 1e9 / rate, rate
      printf "CPU time %.0f s (%.1f per layer): %.1f GFLOP per CPU second overall (matmul: %s)\n", cpu, cpu / L, flop / cpu / 1e9, cpu_rate
      printf "peak RSS %.2f GB (target < 6 GB)\n", rss / 1048576 }'
  echo "  load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -rf "$work/out"
done
