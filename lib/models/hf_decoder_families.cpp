#include "hf_decoder_families.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "json_input.hpp"

namespace attn_viz {

const std::vector<DecoderFamily>& decoder_families() {
    static const std::vector<DecoderFamily> families = [] {
        const std::vector<std::string> gemma_keys = {"attn_logit_softcapping", "final_logit_softcapping",
                                                     "query_pre_attn_scalar"};
        DecoderFamily llama{.model_type = "llama", .attention_biases = BiasRule::by_config, .mlp_bias_key = true};
        DecoderFamily mistral{.model_type = "mistral", .windows = WindowRule::every_layer, .default_window = 4096};
        DecoderFamily qwen2{.model_type = "qwen2",
                            .attention_biases = BiasRule::qkv,
                            .windows = WindowRule::from_layer,
                            .default_window = 4096,
                            .reads_layer_types = true};
        DecoderFamily qwen3{.model_type = "qwen3",
                            .attention_biases = BiasRule::by_config,
                            .windows = WindowRule::from_layer,
                            .default_window = 4096,
                            .default_head_dim = 128,
                            .qk_norm = true,
                            .reads_layer_types = true};
        DecoderFamily gemma2{.model_type = "gemma2",
                             .attention_biases = BiasRule::by_config,
                             .windows = WindowRule::alternating,
                             .default_window = 4096,
                             .default_head_dim = 256,
                             .default_tied = true,
                             .gemma = true,
                             .default_attn_softcap = 50.0,
                             .default_final_softcap = 30.0,
                             .attn_softcap = true,
                             .reads_layer_types = true,
                             .implemented_keys = gemma_keys};
        DecoderFamily gemma3{.model_type = "gemma3_text",
                             .attention_biases = BiasRule::by_config,
                             .windows = WindowRule::pattern,
                             .default_window = 4096,
                             .default_head_dim = 256,
                             .default_rope_base = 1000000.0,
                             .default_tied = true,
                             .qk_norm = true,
                             .gemma = true,
                             .reads_layer_types = true,
                             .implemented_keys = gemma_keys};
        DecoderFamily phi3{.model_type = "phi3",
                           .windows = WindowRule::every_layer,
                           .default_epsilon = 1e-5,
                           .fused = true,
                           .partial_rotary = true};
        return std::vector<DecoderFamily>{llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3};
    }();
    return families;
}

const DecoderFamily& decoder_family(const HfConfig& hf) {
    // The names gathered by hand, not through std::views: clang 14, which builds the fuzz targets,
    // cannot compile libstdc++ 12's ranges.
    std::vector<std::string> names;
    for (const DecoderFamily& family : decoder_families()) {
        if (family.model_type == hf.model_type) return family;
        names.push_back(family.model_type);
    }
    fail_input(hf.path, fmt::format("model_type {} is not supported (supported: {})",
                                    json_excerpt(nlohmann::json(hf.model_type)), fmt::join(names, ", ")));
}

int64_t sliding_window_of(const HfConfig& hf, const DecoderFamily& family, int64_t layer, int64_t layers) {
    if (family.windows == WindowRule::none) return 0;
    if (family.windows == WindowRule::from_layer && !hf.use_sliding_window.value_or(false)) return 0;
    const bool by_layer_types = family.reads_layer_types && !hf.layer_types.empty();
    if (by_layer_types && static_cast<int64_t>(hf.layer_types.size()) != layers)
        fail_input(hf.path,
                   fmt::format("layer_types lists {} layers, num_hidden_layers is {}", hf.layer_types.size(), layers));
    bool sliding = true;  // every_layer
    if (by_layer_types)
        sliding = hf.layer_types[static_cast<size_t>(layer)] == "sliding_attention";
    else if (family.windows == WindowRule::from_layer)
        sliding = layer >= hf.max_window_layers.value_or(28);
    else if (family.windows == WindowRule::alternating)
        sliding = layer % 2 == 0;
    else if (family.windows == WindowRule::pattern)
        sliding = (layer + 1) % hf.sliding_window_pattern.value_or(6) != 0;
    return sliding ? hf.sliding_window.value_or(family.default_window) : 0;
}

}  // namespace attn_viz
