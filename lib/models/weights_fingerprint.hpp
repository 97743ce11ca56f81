// The weights a result was computed from, as 64-bit fingerprints (XXH3, core/fingerprint.hpp): one
// attention layer, or a whole model of any family, so that corpus partials of different weights
// are not merged. docs/analysis.md, "Fingerprints", defines the bytes hashed.
#pragma once

#include <cstdint>
#include <functional>

#include "layer_weights.hpp"
#include "model_weights.hpp"
#include "seq2seq_weights.hpp"

namespace attn_viz {

// Dimensions, causal flag, RoPE style and base, then W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O
// (each: rank, dimensions, float32 values).
uint64_t layer_fingerprint(const LayerWeights& weights);

// A whole model, in the byte order its family has always been hashed in (so corpus partials keep
// matching), told apart by the norm:
//   rms (the Llama family): its configuration (d_model, ffn_dim, n_layers, n_heads, n_kv_heads,
//     vocab_size, max_tokens, shared classifier 0/1), then per block the attention layer's
//     fingerprint (layer_fingerprint) and its tensors (attention_norm and feed_forward_norm
//     weights, w_in, w_out, w_up, then b_in, b_out, b_up where present; a streaming model's blocks
//     are read for it), then token_embedding, the final norm's weight and classifier; the
//     activation, a plain feed-forward and a residual layout other than pre-norm only when set.
//   layer_norm (GPT-2, GPT-NeoX, BERT): the architecture's bytes, its configuration (d_model,
//     ffn_dim, vocab_size, n_layers, max_tokens, post-norm 0/1, parallel 0/1, activation 0 erf /
//     1 tanh) and norm_epsilon as a float64, then per block the attention layer's fingerprint and
//     its tensors (attention_norm weight and bias, feed_forward_norm weight and bias, w_in, b_in,
//     w_out, b_out; w_up and b_up where present), then token_embedding, position_embedding,
//     token_type_embedding, embedding_norm weight and bias, final_norm weight and bias, classifier.
// on_block (if set) is shown each block once hashed, in order: a pass that needs every block can
// share the reads (a streaming model's block is let go after it).
using BlockObserver = std::function<void(int64_t layer, const BlockWeights& block)>;
uint64_t model_fingerprint(const ModelWeights& weights, const BlockObserver& on_block = {});

// An encoder-decoder (BART, T5): the architecture's bytes, its configuration (d_model, ffn_dim,
// vocab_size, n_layers, n_decoder_layers, n_heads, head_dim, max_tokens, norm, residual, feed-forward,
// activation, decoder_start_token_id) and norm_epsilon, embedding_scale and classifier_scale as
// float64; then per encoder block its block (the attention layer's fingerprint, then
// attention_norm, feed_forward_norm (weight, bias each), w_in, b_in, w_up, b_up, w_out, b_out), per
// decoder block its block, its cross-attention layer's fingerprint and cross_attention_norm; then
// token_embedding, each stack's positions, embedding_norm, final_norm, relative position table and
// max_distance (encoder first), the classifier and its bias.
uint64_t seq2seq_fingerprint(const Seq2SeqWeights& weights);

}  // namespace attn_viz
