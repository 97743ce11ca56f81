// What a corpus result was computed from, as 64-bit fingerprints (XXH3, core/fingerprint.hpp):
// the layer (so partials of different weights are not merged) and each sequence (so one sequence
// is not counted twice). docs/analysis.md, "Fingerprints", defines the bytes hashed.
#pragma once

#include <cstdint>
#include <vector>

#include "layer_weights.hpp"

namespace attn_viz {

// Dimensions, causal flag, RoPE style and base, then W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O
// (each: rank, dimensions, float32 values).
uint64_t layer_fingerprint(const LayerWeights& weights);

// embeddings: [T, D]; key_excluded: [T] or empty (= no padding). The embeddings (rank,
// dimensions, values), then T mask bytes (1 = excluded), so "no mask" and "all ones" agree.
uint64_t sequence_fingerprint(const Tensor& embeddings, const std::vector<uint8_t>& key_excluded);

}  // namespace attn_viz
