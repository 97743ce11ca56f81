// The weights a result was computed from, as 64-bit fingerprints (XXH3, core/fingerprint.hpp): one
// attention layer, or a whole model of either kind, so that corpus partials of different weights
// are not merged. docs/analysis.md, "Fingerprints", defines the bytes hashed.
#pragma once

#include <cstdint>

#include "hf_transformer_checkpoint.hpp"
#include "layer_weights.hpp"
#include "llama2c_checkpoint.hpp"

namespace attn_viz {

// Dimensions, causal flag, RoPE style and base, then W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O
// (each: rank, dimensions, float32 values).
uint64_t layer_fingerprint(const LayerWeights& weights);

// A Llama-style model: its configuration (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len, shared classifier 0/1), then per block the attention layer's fingerprint
// (layer_fingerprint) and its RMSNorm and feed-forward tensors (rms_attention, rms_ffn, w1, w2,
// w3; a streaming model's blocks are read for it), then token_embedding, rms_final and classifier.
uint64_t model_fingerprint(const LlamaWeights& weights);

// A GPT-2, GPT-NeoX or BERT model: its model_type's bytes, its configuration (d_model, ffn_dim,
// vocab_size, num_layers, max_positions, post_norm 0/1, parallel_residual 0/1, activation 0 erf /
// 1 tanh) and norm_epsilon as a float64, then per block the attention layer's fingerprint and its
// tensors (attention_norm weight and bias, mlp_norm weight and bias, w_in, b_in, w_out, b_out),
// then token_embedding, position_embedding, token_type_embedding, embedding_norm weight and bias,
// final_norm weight and bias, classifier.
uint64_t model_fingerprint(const TransformerWeights& weights);

}  // namespace attn_viz
