// The weights of one multi-head attention layer, in one convention whatever file they came from.
#pragma once

#include <string>
#include <vector>

#include "tensor.hpp"

namespace attn_viz {

enum class RopeStyle {
    none,
    interleaved,  // rotate pairs (2i, 2i+1) of each head vector (llama2.c, GPT-J)
    half_split,   // rotate pairs (i, i + d_h/2) (Hugging Face Llama, GPT-NeoX)
};

// How RoPE's frequencies are stretched for longer contexts (config.json's rope_scaling), as
// transformers' modeling_rope_utils computes them:
//   linear: every inverse frequency divided by `factor` (positions divided by it);
//   llama3: wavelengths above original_max_positions / low_freq_factor divided by `factor`, those
//           below original_max_positions / high_freq_factor kept, a smooth blend in between.
struct RopeScaling {
    enum class Kind { none, linear, llama3 };
    Kind kind = Kind::none;
    double factor = 1.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    double original_max_positions = 8192.0;
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
    // Sliding-window attention (Mistral, Qwen2): a causal layer whose query i sees only keys
    // i - sliding_window + 1 .. i; 0 = every earlier key.
    int64_t sliding_window = 0;
    RopeStyle rope = RopeStyle::none;
    double rope_base = 10000.0;
    RopeScaling rope_scaling;
    // Partial rotary (GPT-NeoX's rotary_pct): RoPE turns only the first rope_dims features of each
    // head, with frequencies of a rope_dims-wide head; the rest pass through. 0 = the whole head.
    int64_t rope_dims = 0;
    // RMSNorm of queries and keys after the projection, before RoPE: per head (Qwen3, Gemma 3),
    // each head vector v / sqrt(mean(v^2) + qk_norm_epsilon) * (qk_norm_offset + weight); or across
    // heads (OLMo 2), each token's whole projection [H*d_h] (keys: [KV*d_h]) as one vector.
    Tensor q_norm;  // [d_h] ([H*d_h] across heads), or empty: no norm
    Tensor k_norm;  // [d_h] ([KV*d_h] across heads), or empty: no norm
    double qk_norm_epsilon = 1e-6;
    float qk_norm_offset = 0.0f;  // 1 for Gemma's (1 + weight)
    bool qk_norm_across_heads = false;
    double score_scale = 0.0;    // scores Q K^T * score_scale (Gemma: query_pre_attn_scalar^-1/2); 0 = 1/sqrt(d_h)
    double logit_softcap = 0.0;  // scores -> cap * tanh(scores / cap) before masking (Gemma 2); 0 = none

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

// The inverse frequency of each rotated pair i of a head, base^(-2i / rotated) before scaling,
// for the layer's rotated width (rope_dims, or the whole head).
std::vector<double> rope_inverse_frequencies(const LayerWeights& layer);

// Transposes a [rows, cols] matrix (for weights stored [out, in]).
Tensor transposed(const Tensor& matrix);

// Rows [begin, begin + count) of a [rows, cols] matrix, or elements of a vector (a part of a
// fused q/k/v projection).
Tensor rows_of(const Tensor& matrix, int64_t begin, int64_t count);

}  // namespace attn_viz
