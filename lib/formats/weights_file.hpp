// The attn-viz/weights@1 JSON format for one attention layer (README.md, "Weights file").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "layer_weights.hpp"
#include "load_limits.hpp"

namespace attn_viz {

// Reads and validates a weights file: required keys, D divisible by H, every tensor's shape,
// finite values (unless `limits` allow others). Tensors may be inline arrays or {"npy": "file.npy"}
// beside the JSON.
LayerWeights read_weights_file(const std::string& path, const LoadLimits& limits = {});

// The same from a JSON document already in memory (fuzzing, tests): `where` names it in
// messages, `base_dir` resolves {"npy": ...} references.
LayerWeights parse_weights(const nlohmann::json& doc, const std::string& where, const std::string& base_dir,
                           const LoadLimits& limits = {});

// Writes `layer` in the same format with inline arrays (d_head must be D / H, no GQA or RoPE).
void write_weights_file(const std::string& path, const LayerWeights& layer);

}  // namespace attn_viz
