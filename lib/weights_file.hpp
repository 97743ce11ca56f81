// The attn-viz/weights@1 JSON format for one attention layer (README.md, "Weights file").
#pragma once

#include <string>

#include "layer_weights.hpp"

namespace attn_viz {

// Reads and validates a weights file: required keys, D divisible by H, every tensor's shape,
// finite values. Tensors may be inline arrays or {"npy": "file.npy"} beside the JSON.
LayerWeights read_weights_file(const std::string& path);

// Writes `layer` in the same format with inline arrays (d_head must be D / H, no GQA or RoPE).
void write_weights_file(const std::string& path, const LayerWeights& layer);

}  // namespace attn_viz
