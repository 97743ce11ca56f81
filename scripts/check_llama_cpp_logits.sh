#!/usr/bin/env bash
# Checks that llama.cpp (scripts/llama_cpp_prompt.cpp, the peer of scripts/bench_llama_cpp.sh) and
# `attn-viz model` compute the same model: stories260K's F32 GGUF over fixed token ids; attn-viz's
# logit attribution (stats.json) gives each position's logit of the next input token, llama.cpp's
# logits (every position, --logits-out, K and V kept in float32) give the same numbers. Prints the
# largest difference and fails above TOLERANCE (default 1e-4: float32 sums in another order; the
# logits are of order 10; with llama.cpp's default float16 K and V the difference is ~1e-2).
# Usage: scripts/check_llama_cpp_logits.sh [MODEL.gguf]   (default /work/shared/models/stories260K-gguf/stories260K.gguf)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ATTN_VIZ:-$root/build/attn-viz}
model=${1:-/work/shared/models/stories260K-gguf/stories260K.gguf}
tolerance=${TOLERANCE:-1e-4}
driver=$("$root/scripts/setup_llama_cpp.sh" | tail -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# BOS, then 40 fixed ids spread over the 512-token vocabulary.
ids=$(awk 'BEGIN { printf "1"; for (i = 1; i <= 40; ++i) printf ",%d", 3 + (i * 211) % 509 }')
"$bin" model -q --stats-only --logit-attribution --threads 1 --model "$model" --tokens "$ids" --out "$work/out" >/dev/null
tr ',' '\n' <<<"$ids" >"$work/ids.txt"
"$driver" --lib-dir "$(dirname "$driver")/lib" --model "$model" --ids "$work/ids.txt" --threads 1 --kv-f32 \
  --logits-out "$work/logits.npy" >/dev/null
/usr/bin/python3 - "$work/out/stats.json" "$work/logits.npy" "$tolerance" <<'PY'
import json, sys
import numpy as np
positions = json.load(open(sys.argv[1]))["logit_attribution"]["positions"]
logits = np.load(sys.argv[2]).astype(np.float64)
ours = np.array([p["logit"] for p in positions])
theirs = np.array([logits[p["position"], p["target_id"]] for p in positions])
worst = np.abs(ours - theirs).max()
print(f"{len(positions)} positions: largest |attn-viz - llama.cpp| logit difference {worst:.2e} "
      f"(logits up to {np.abs(ours).max():.1f}; tolerance {sys.argv[3]})")
sys.exit(0 if worst <= float(sys.argv[3]) else 1)
PY
