// What a corpus result was computed from, as 64-bit fingerprints (XXH3, core/fingerprint.hpp):
// the layer or model (so partials of different weights are not merged) and each sequence (so one
// sequence is not counted twice). docs/analysis.md, "Fingerprints", defines the bytes hashed.
#pragma once

#include <cstdint>
#include <vector>

#include "layer_weights.hpp"
#include "llama2c_checkpoint.hpp"

namespace attn_viz {

// Dimensions, causal flag, RoPE style and base, then W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O
// (each: rank, dimensions, float32 values).
uint64_t layer_fingerprint(const LayerWeights& weights);

// embeddings: [T, D]; key_excluded: [T] or empty (= no padding). The embeddings (rank,
// dimensions, values), then T mask bytes (1 = excluded), so "no mask" and "all ones" agree.
uint64_t sequence_fingerprint(const Tensor& embeddings, const std::vector<uint8_t>& key_excluded);

// A whole model (attn-viz model): its configuration (dim, hidden_dim, n_layers, n_heads,
// n_kv_heads, vocab_size, seq_len, shared classifier 0/1), then per block the attention layer's
// fingerprint (layer_fingerprint) and its RMSNorm and feed-forward tensors (rms_attention, rms_ffn,
// w1, w2, w3; a streaming model's blocks are read for it), then token_embedding, rms_final and classifier.
uint64_t model_fingerprint(const LlamaWeights& weights);

// A sequence of token ids (a model corpus line, {"text"} encoded or {"tokens"}): T, then each id.
uint64_t token_sequence_fingerprint(const std::vector<int>& ids);

}  // namespace attn_viz
