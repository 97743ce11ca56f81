// What one attention layer costs: floating-point operations (for GFLOP/s figures) and memory
// (checked against the budget before a run).
#pragma once

#include <cstdint>

#include "model_weights.hpp"

namespace attn_viz {

// Floating-point operations of one attention layer's products (projections, scores, P.V,
// output projection, and with `shares` what summarises each head's share of the output: Z^T Z
// and z G_hh, see head_output_shares.hpp), for GFLOP/s figures. T queries, S keys; `causal`
// counts scores and P.V over the visible pairs only (the products skip most of the rest).
double attention_flops(int64_t T, int64_t S, int64_t D, int64_t H, int64_t KV, int64_t d_head, bool shares,
                       bool causal = false);

// Floating-point operations of one block of a whole model over T tokens (what `attn-viz bench
// --model` divides each block's time by): its attention's products without the output shares
// (attention_flops, causal where the layer is; a sliding window's layer computes fewer scores than
// counted) and its feed-forward's, 2 T D F per matrix (three when gated, two when plain).
double block_flops(const LayerWeights& attention, const ModelConfig& config, int64_t T);

// An upper estimate of the memory one attention layer run needs: weights, Q/K/V, the [H, T, S]
// attention map, logit margins, context, output and per-head contribution buffers.
// T queries and S keys (S = T without cross-attention).
uint64_t estimate_layer_run_bytes(int64_t d_model, int64_t num_heads, int64_t num_kv_heads, int64_t d_head, int64_t T,
                                  int64_t S);

// An upper estimate of what one attention layer's result (LayerResult) holds once the run is done:
// the [H, T, S] map, margins and per-head contribution norms [H, T], context [T, H d_h], values
// [KV, S, d_h], output [T, D], the [H, H] contribution Gram and value norms [H, S].
uint64_t estimate_layer_result_bytes(int64_t d_model, int64_t num_heads, int64_t num_kv_heads, int64_t d_head,
                                     int64_t T, int64_t S);

}  // namespace attn_viz
