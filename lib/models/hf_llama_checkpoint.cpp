#include "hf_llama_checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "decoder_blocks.hpp"
#include "error.hpp"
#include "family_table.hpp"
#include "hf_config.hpp"
#include "json_input.hpp"
#include "safetensors_shards.hpp"

namespace attn_viz {

namespace {

// Throws Error(bad_input) naming config.json unless `value` (of `key`) is one of `supported`.
void require_supported(const HfConfig& hf, const char* key, const std::string& value,
                       const std::vector<std::string>& supported) {
    if (std::find(supported.begin(), supported.end(), value) != supported.end()) return;
    fail_input(hf.path, fmt::format("{} {} is not supported (supported: {})", key, json_excerpt(nlohmann::json(value)),
                                    fmt::join(supported, ", ")));
}

// OPT: do_layer_norm_before false puts each norm after its residual add (OPT-350m).
bool post_norm_blocks(const HfConfig& hf, const FamilySpec& family) {
    return family.reads_layer_norm_before && !hf.do_layer_norm_before.value_or(true);
}

// Whether the blocks' output is normalized before the classifier: not after OPT's post-norm
// blocks, nor where its _remove_final_layer_norm says so (OPTDecoder).
bool has_final_norm(const HfConfig& hf, const FamilySpec& family) {
    return !post_norm_blocks(hf, family) &&
           !(family.reads_layer_norm_before && hf.remove_final_layer_norm.value_or(false));
}

// Step 1 of reading a folder: the hyper-parameters, refusing what the forward pass cannot do.
ModelConfig llama_config(const HfConfig& hf, const FamilySpec& family) {
    if (!hf.rope_scaling.empty()) require_supported(hf, "rope_scaling", hf.rope_scaling, rope_scaling_types());
    refuse_unimplemented(hf, family.implemented_keys);
    if (hf.rotary_fraction && *hf.rotary_fraction != 1.0 && !family.partial_rotary)
        fail_input(hf.path,
                   fmt::format("partial_rotary_factor {} is not supported for {} (transformers' {} turns "
                               "whole heads)",
                               json_excerpt(nlohmann::json(*hf.rotary_fraction)), hf.model_type, hf.model_type));
    ModelConfig c;  // RMSNorm, gated feed-forward, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
    c.family = family.name;
    c.d_model = required_value(hf.d_model, hf, "hidden_size");
    c.ffn_dim = family.default_ffn_factor > 0 && !hf.intermediate_size
                    ? family.default_ffn_factor * c.d_model
                    : required_value(hf.intermediate_size, hf, "intermediate_size");
    c.n_layers = required_value(hf.num_layers, hf, "num_hidden_layers");
    c.n_heads = required_value(hf.num_heads, hf, "num_attention_heads");
    c.n_kv_heads = hf.num_kv_heads.value_or(c.n_heads);
    if (family.multi_query) {  // GPTBigCodeConfig: multi_query true by default
        if (!hf.multi_query.value_or(true))
            fail_input(hf.path,
                       "multi_query = false is not supported (c_attn then holds each head's q, k and v "
                       "together)");
        if (hf.num_kv_heads && *hf.num_kv_heads != 1)
            fail_input(hf.path,
                       fmt::format("{} has one key/value head; the config says {}", hf.model_type, *hf.num_kv_heads));
        c.n_kv_heads = 1;
    }
    c.vocab_size = required_value(hf.vocab_size, hf, "vocab_size");
    c.max_tokens = required_value(hf.max_positions, hf, "max_position_embeddings");
    c.shared_classifier = hf.tie_word_embeddings.value_or(family.default_tied);
    c.norm_epsilon = family.fixed_epsilon ? family.default_epsilon : hf.norm_epsilon.value_or(family.default_epsilon);
    c.rope_base = hf.rope_base.value_or(family.default_rope_base);
    c.activation =
        family.reads_hidden_activation ? activation_named(hf.hidden_activation, hf, family.default_activation)
        : family.gelu_means_tanh && hf.activation == "gelu" ? Activation::gelu_tanh
                                                            : parse_activation(hf, family.default_activation);
    const bool sized_by_width = family.head_size_of_width || (!hf.head_dim && family.default_head_dim == 0);
    if (sized_by_width && c.d_model % c.n_heads != 0)
        fail_input(hf.path, fmt::format("{}the head size hidden_size / num_attention_heads = {} / {} is not whole",
                                        family.head_size_of_width ? "" : "no head_dim, and ", c.d_model, c.n_heads));
    const int64_t width_head = c.d_model / c.n_heads;
    if (family.head_size_of_width && hf.head_dim && *hf.head_dim != width_head)
        fail_input(hf.path, fmt::format("head_dim {} is not hidden_size / num_attention_heads = {} ({} sizes its "
                                        "heads by the width and its rotary embedding by head_dim)",
                                        *hf.head_dim, width_head, hf.model_type));
    const int64_t default_head = family.default_head_dim > 0 ? family.default_head_dim : width_head;
    c.head_dim = family.head_size_of_width ? width_head : hf.head_dim.value_or(default_head);
    c.norm = family.norm;
    c.feed_forward = family.feed_forward;
    c.residual = family.reads_parallel_residual && hf.parallel_residual.value_or(false) ? ResidualLayout::parallel
                 : post_norm_blocks(hf, family)                                         ? ResidualLayout::post_norm
                                                                                        : family.residual;
    if (hf.word_embed_proj_dim && *hf.word_embed_proj_dim != c.d_model)
        fail_input(hf.path, fmt::format("word_embed_proj_dim {} differs from hidden_size {} (project_in and "
                                        "project_out are not supported)",
                                        *hf.word_embed_proj_dim, c.d_model));
    if (!hf.layer_norm_elementwise_affine.value_or(true))
        fail_input(hf.path, "layer_norm_elementwise_affine = false (norms without weights) is not supported");
    // transformers casts sqrt(D) to the model's dtype
    if (family.scaled_embeddings) c.embedding_scale = static_cast<float>(std::sqrt(static_cast<double>(c.d_model)));
    if (family.softcaps) c.final_logit_softcap = hf.final_logit_softcapping.value_or(family.default_final_softcap);
    if (family.reads_multipliers) {
        c.embedding_scale = static_cast<float>(hf.embedding_multiplier.value_or(1.0));
        c.residual_scale = hf.residual_multiplier.value_or(1.0);
        c.logits_scaling = hf.logits_scaling.value_or(1.0);
    }
    if (family.reads_logit_scale) {  // CohereForCausalLM: logits * logit_scale (null: it cannot run)
        const double logit_scale = hf.logit_scale.value_or(family.default_logit_scale);
        if (logit_scale == 0) fail_input(hf.path, "logit_scale is null (transformers multiplies the logits by it)");
        c.logits_scaling = 1.0 / logit_scale;
    }
    return c;
}

// Whether block `layer` (of `layers`) turns queries and keys: SmolLM3's no_rope_layers (1: yes), or
// without them all but every no_rope_layer_interval-th layer (3, 7, ... for 4); every layer of the
// other families.
bool layer_turns(const HfConfig& hf, const FamilySpec& family, int64_t layer, int64_t layers) {
    if (!family.reads_no_rope_layers) return true;
    if (hf.no_rope_layers.empty()) return (layer + 1) % hf.no_rope_layer_interval.value_or(4) != 0;
    if (static_cast<int64_t>(hf.no_rope_layers.size()) != layers)
        fail_input(hf.path, fmt::format("no_rope_layers lists {} layers, num_hidden_layers is {}",
                                        hf.no_rope_layers.size(), layers));
    return hf.no_rope_layers[static_cast<size_t>(layer)] == 1;
}

// GPT-Neo: window_size keys (the family's default when absent) on the layers attention_types
// calls local, every earlier key on the global ones.
int64_t local_window_of(const HfConfig& hf, const FamilySpec& family, int64_t layer, int64_t layers) {
    if (static_cast<int64_t>(hf.attention_layers.size()) != layers)
        fail_input(hf.path, fmt::format("attention_types gives {} layers, num_layers is {}", hf.attention_layers.size(),
                                        layers));
    if (hf.attention_layers[static_cast<size_t>(layer)] != "local") return 0;
    return hf.window_size.value_or(family.default_window);
}

// The keys each query of block `layer` (of `layers`) sees (0: every earlier key): the family's
// rule, or layer_types where config.json gives them and the family reads them; sliding_window
// (null: none; absent: the family's default).
int64_t sliding_window_of(const HfConfig& hf, const FamilySpec& family, int64_t layer, int64_t layers) {
    if (family.windows == WindowRule::none) return 0;
    if (family.windows == WindowRule::local_layers) return local_window_of(hf, family, layer, layers);
    const bool gated = family.windows == WindowRule::from_layer || family.windows == WindowRule::no_rope;
    if (gated && !hf.use_sliding_window.value_or(false)) return 0;
    const bool by_layer_types = family.reads_layer_types && !hf.layer_types.empty();
    if (by_layer_types && static_cast<int64_t>(hf.layer_types.size()) != layers)
        fail_input(hf.path,
                   fmt::format("layer_types lists {} layers, num_hidden_layers is {}", hf.layer_types.size(), layers));
    const bool sliding = by_layer_types ? hf.layer_types[static_cast<size_t>(layer)] == "sliding_attention"
                         : family.windows == WindowRule::no_rope
                             ? !layer_turns(hf, family, layer, layers)
                             : layer_slides(family.windows, layer, hf.max_window_layers.value_or(28),
                                            hf.sliding_window_pattern.value_or(6));
    return sliding ? hf.sliding_window.value_or(family.default_window) : 0;
}

// Block l's attention settings: half-split RoPE with config.json's base and scaling, and what the
// family changes: sliding window, q/k norms, Gemma's and Granite's score scale, soft-cap and local RoPE base,
// partial rotary (StableLM's by default), SmolLM3's layers without RoPE.
LayerWeights attention_settings(const HfConfig& hf, const FamilySpec& family, const ModelConfig& c, int64_t l) {
    LayerWeights a;
    a.d_model = c.d_model, a.num_heads = c.n_heads, a.num_kv_heads = c.n_kv_heads, a.d_head = c.head_dim;
    a.causal = true;
    const bool learned_positions = !family.hf_names.position_embedding.empty();
    a.rope = !learned_positions && layer_turns(hf, family, l, c.n_layers) ? family.hf_rope : RopeStyle::none;
    a.rope_base = c.rope_base;
    a.rope_scaling = hf.rope_scaling_parameters;
    a.sliding_window = sliding_window_of(hf, family, l, c.n_layers);
    set_qk_norm(family, c.norm_epsilon, a);
    if (family.score_scale == ScoreScale::query_pre_attn_scalar)
        a.score_scale = 1.0 / std::sqrt(hf.query_pre_attn_scalar.value_or(256.0));
    if (family.score_scale == ScoreScale::attention_multiplier) a.score_scale = hf.attention_multiplier.value_or(1.0);
    if (family.score_scale == ScoreScale::none) a.score_scale = 1.0;
    if (family.reads_scale_attn_weights && !hf.scale_attn_weights.value_or(true)) a.score_scale = 1.0;
    if (family.softcaps)
        a.logit_softcap =
            family.hf_attn_softcap ? hf.attn_logit_softcapping.value_or(family.default_attn_softcap) : 0.0;
    if (family.local_rope_base > 0 && a.sliding_window > 0) {  // Gemma 3's local layers: their own base, unscaled
        a.rope_base = hf.rope_local_base_freq.value_or(family.local_rope_base);
        a.rope_scaling = {};
    }
    // transformers: int(head_dim * partial_rotary_factor)
    if (const double fraction = hf.rotary_fraction.value_or(family.default_rotary_fraction); fraction != 1.0) {
        a.rope_dims = static_cast<int64_t>(static_cast<double>(c.head_dim) * fraction);
        // No rotary features: transformers' inverse frequencies are empty and nothing turns.
        if (a.rope_dims == 0) a.rope = RopeStyle::none;
        if (a.rope_dims % 2 != 0)
            fail_input(hf.path, fmt::format("partial_rotary_factor {} gives {} rotary features per head of {}; an "
                                            "even count is needed",
                                            json_excerpt(nlohmann::json(fraction)), a.rope_dims, c.head_dim));
    }
    return a;
}

// The row of config.json's model_type, or Error(bad_input) naming config.json and listing them.
const FamilySpec& decoder_family(const HfConfig& hf) {
    if (const FamilySpec* family = family_of_model_type(hf.model_type)) return *family;
    fail_input(hf.path,
               fmt::format("model_type {} is not supported (supported: {})",
                           json_excerpt(nlohmann::json(hf.model_type)), fmt::join(hf_decoder_model_types(), ", ")));
}

}  // namespace

const std::vector<std::string>& hf_llama_model_types() {
    static const std::vector<std::string> types = hf_decoder_model_types();
    return types;
}

ModelWeights read_hf_llama_folder(const std::string& folder, const LoadLimits& limits) {
    return read_hf_llama_folder(folder, read_hf_config((std::filesystem::path(folder) / "config.json").string()),
                                limits);
}

ModelWeights read_hf_llama_folder(const std::string& folder, const HfConfig& hf, const LoadLimits& limits,
                                  BlockLoading loading) {
    DecoderLayout layout;
    layout.family = &decoder_family(hf);
    layout.container = Container::hf;
    layout.config = llama_config(hf, *layout.family);
    for (int64_t l = 0; l < layout.config.n_layers; ++l)
        layout.settings.push_back(attention_settings(hf, *layout.family, layout.config, l));
    layout.hf = hf;
    layout.final_norm = has_final_norm(hf, *layout.family);
    ModelWeights w;
    w.config = layout.config;
    const auto source = std::make_shared<const SafetensorsShards>(folder, limits);
    // Step 2: every block (or their source); step 3: embeddings, final norm and the classifier
    // (the embeddings when tied).
    if (loading == BlockLoading::streamed)
        w.blocks = std::make_shared<StreamedDecoderBlocks>(source, layout);
    else
        w.blocks = read_decoder_blocks(*source, layout);
    read_decoder_outside_blocks(*source, layout, w);
    return w;
}

}  // namespace attn_viz
