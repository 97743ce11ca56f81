// The weights of one multi-head attention layer, in one convention whatever file they came from.
#pragma once

#include <string>

#include "tensor.hpp"

namespace attn_viz {

enum class RopeStyle {
    none,
    interleaved,  // rotate pairs (2i, 2i+1) of each head vector (llama2.c, GPT-J)
    half_split,   // rotate pairs (i, i + d_h/2) (Hugging Face Llama, GPT-NeoX)
};

// Projections are used as x W with rows = input features, as in the seed texts:
// Q = X W_Q + b_Q; query head h reads columns [h d_h, (h+1) d_h) of Q; key/value head g reads
// columns [g d_h, (g+1) d_h) of K and V, and query head h uses KV head h / (H / KV);
// output = concat(head outputs) W_O + b_O.
struct LayerWeights {
    int64_t d_model = 0;       // D
    int64_t num_heads = 0;     // H
    int64_t num_kv_heads = 0;  // KV, dividing H (== H without grouped-query attention)
    int64_t d_head = 0;        // d_h
    bool causal = false;
    RopeStyle rope = RopeStyle::none;
    double rope_base = 10000.0;
    // Partial rotary (GPT-NeoX's rotary_pct): RoPE turns only the first rope_dims features of each
    // head, with frequencies of a rope_dims-wide head; the rest pass through. 0 = the whole head.
    int64_t rope_dims = 0;

    Tensor w_q;  // [D, H*d_h]
    Tensor w_k;  // [D, KV*d_h]
    Tensor w_v;  // [D, KV*d_h]
    Tensor w_o;  // [H*d_h, D]
    Tensor b_q;  // [H*d_h] or empty (zero)
    Tensor b_k;  // [KV*d_h] or empty
    Tensor b_v;  // [KV*d_h] or empty
    Tensor b_o;  // [D] or empty
};

// Checks that dimensions and every tensor's shape agree; throws Error(bad_input) naming `where`.
void validate_layer(const LayerWeights& layer, const std::string& where);

// Transposes a [rows, cols] matrix (for weights stored [out, in]).
Tensor transposed(const Tensor& matrix);

// Rows [begin, begin + count) of a [rows, cols] matrix, or elements of a vector (a part of a
// fused q/k/v projection).
Tensor rows_of(const Tensor& matrix, int64_t begin, int64_t count);

}  // namespace attn_viz
