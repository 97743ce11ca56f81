#!/usr/bin/env bash
# The FLOP of a Llama-shaped decoder's forward pass over T tokens, what the benchmarks divide by the
# forward's time: per layer the Q/K/V/O projections, the causal scores and P.V, the SwiGLU
# feed-forward; then the classifier.
# Usage: scripts/forward_flops.sh D LAYERS HEADS KV_HEADS FFN VOCAB T
set -euo pipefail
if [[ $# -ne 7 ]]; then
  echo "usage: $0 D LAYERS HEADS KV_HEADS FFN VOCAB T" >&2
  exit 2
fi
awk -v D="$1" -v L="$2" -v H="$3" -v KV="$4" -v F="$5" -v V="$6" -v T="$7" 'BEGIN {
  dh = D / H
  layer = 2 * T * D * (2 * D + 2 * KV * dh) + 4 * H * dh * T * (T + 1) / 2 + 2 * T * 3 * D * F
  printf "%.0f\n", L * layer + 2 * T * D * V }'
