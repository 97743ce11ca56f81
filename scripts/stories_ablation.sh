#!/usr/bin/env bash
# Runs attn-viz model on stories260K over its own greedy story with every head ablated, rollout
# and flow, copies the ablation and rollout pictures into docs/images/ and prints the ranking as
# the Markdown table shown in docs/commands.md. Usage: scripts/stories_ablation.sh [MODEL_DIR] [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/../shared/models/stories260K}
out=${2:-$root/out/stories_ablation}
text="Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
"$root/build/attn-viz" model --checkpoint "$model/stories260K.bin" --tokenizer "$model/tok512.bin" --text "$text" \
  --out "$out" --ablate all --rollout --flow --threads 1 --timings --force -q
cp "$out/ablation_delta_loss.png" "$root/docs/images/story_ablation_delta_loss.png"
cp "$out/rollout/layer_04.png" "$root/docs/images/story_rollout_layer_04.png"
# The five heads whose removal hurts most and the two that matter least.
awk -F, 'NR == 1 { print "| rank | head | delta loss (nats) | KL (nats) |"; print "|---|---|---|---|"; next }
         { rows[NR] = sprintf("| %d | L%dH%d | %+.4f | %.4f |", $1, $3, $4, $5, $6) }
         END { for (i = 2; i <= 6; ++i) print rows[i]; print "| ... | | | |"; for (i = NR - 1; i <= NR; ++i) print rows[i] }' \
  "$out/ablation.csv"
