// Layout presets: where each framework keeps one attention layer's weights in a safetensors
// checkpoint and in which orientation, converted to LayerWeights' x W convention.
//   torch-mha  torch.nn.MultiheadAttention: in_proj_weight [3D, D], out_proj.weight [D, D]
//   bert       encoder.layer.N.attention.self.{query,key,value}, attention.output.dense
//   gpt2       h.N.attn.c_attn [D, 3D] (Conv1D, already x W), h.N.attn.c_proj
//   llama      model.layers.N.self_attn.{q,k,v,o}_proj (GQA, RoPE half-split, causal)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hf_config.hpp"
#include "layer_weights.hpp"
#include "load_limits.hpp"
#include "safetensors.hpp"
#include "tensor_source.hpp"

namespace attn_viz {

// What the checkpoint cannot tell; each unset value comes from the config.json beside the
// checkpoint (or `config_path`), then from the preset's default.
struct LayoutOptions {
    std::optional<int64_t> num_heads;
    std::optional<int64_t> num_kv_heads;  // llama only (GQA); the other presets have KV = H
    std::optional<double> rope_base;      // default: config rope_theta, else 10000
    std::optional<RopeStyle> rope;        // default: half_split for llama, none for the others
    std::optional<bool> causal;           // default: true for gpt2 and llama, false for bert and torch-mha
    // Replaces the preset's default name prefixes ("" and "bert." for bert, "" and "transformer."
    // for gpt2, ...). "{layer}" in it is replaced by the layer index (torch-mha modules in a list).
    std::optional<std::string> prefix;
    std::string config_path;  // "" = config.json beside the checkpoint, if any
};

// "torch-mha", "bert", "gpt2", "llama".
const std::vector<std::string>& layout_names();

// "none", "interleaved", "half" (also "half_split", "half-split"); throws Error(usage) otherwise.
RopeStyle parse_rope_style(const std::string& text);

// Number of layers of `layout` the file holds (0 when none).
int count_layers(const TensorSource& file, const std::string& layout, const LayoutOptions& options);

// Loads layer `layer` of a safetensors checkpoint (read within `limits`). Throws Error(bad_input)
// naming the file, the layer and the expected tensor name when a tensor is missing or misshapen,
// when the layer is out of range (saying how many exist) or when a head count is unknown (with
// the Remedy that names it).
LayerWeights load_layer(const std::string& checkpoint_path, const std::string& layout, int layer,
                        const LayoutOptions& options, const LoadLimits& limits = {});
LayerWeights load_layer(const TensorSource& file, const std::string& layout, int layer, const LayoutOptions& options,
                        const HfConfig& config);

}  // namespace attn_viz
