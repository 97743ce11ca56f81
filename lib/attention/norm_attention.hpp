// Norm-based attention (Kobayashi et al. 2020, "Attention is Not Only a Weight"): how much key j
// actually moves into query i's output through head h, ||a_ij f_h(x_j)|| = a_ij ||v_j W_O^h||,
// with v_j = x_j W_V + b_V the head's value vector (its KV head's under grouped-query attention).
#pragma once

#include "layer_result.hpp"

namespace attn_viz {

// result.attention: [H, T, S]; result.value_norms: [H, S] (AttentionRequest::with_value_norms)
// -> [H, T, S] a_ij ||v_j W_O^h||; hidden entries stay 0. Error(internal) without value norms.
Tensor norm_based_map(const LayerResult& result);

}  // namespace attn_viz
