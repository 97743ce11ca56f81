#include "hf_llama_checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "error.hpp"
#include "hf_config.hpp"
#include "hf_decoder_families.hpp"
#include "json_input.hpp"
#include "layouts.hpp"
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

// Step 1 of reading a folder: the hyper-parameters, refusing what the forward pass cannot do.
ModelConfig llama_config(const HfConfig& hf, const DecoderFamily& family) {
    if (!hf.rope_scaling.empty()) require_supported(hf, "rope_scaling", hf.rope_scaling, rope_scaling_types());
    refuse_unimplemented(hf, family.implemented_keys);
    if (hf.rotary_fraction && *hf.rotary_fraction != 1.0 && !family.partial_rotary)
        fail_input(hf.path,
                   fmt::format("partial_rotary_factor {} is not supported for {} (transformers' {} turns "
                               "whole heads)",
                               json_excerpt(nlohmann::json(*hf.rotary_fraction)), hf.model_type, hf.model_type));
    ModelConfig c;  // RMSNorm, gated feed-forward, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
    c.d_model = required_value(hf.d_model, hf, "hidden_size");
    c.ffn_dim = required_value(hf.intermediate_size, hf, "intermediate_size");
    c.n_layers = required_value(hf.num_layers, hf, "num_hidden_layers");
    c.n_heads = required_value(hf.num_heads, hf, "num_attention_heads");
    c.n_kv_heads = hf.num_kv_heads.value_or(c.n_heads);
    c.vocab_size = required_value(hf.vocab_size, hf, "vocab_size");
    c.max_tokens = required_value(hf.max_positions, hf, "max_position_embeddings");
    c.shared_classifier = hf.tie_word_embeddings.value_or(family.default_tied);
    c.norm_epsilon = hf.norm_epsilon.value_or(family.default_epsilon);
    c.rope_base = hf.rope_base.value_or(family.default_rope_base);
    // transformers' Gemma MLPs read hidden_activation, the others hidden_act.
    c.activation =
        family.gemma ? activation_named(hf.hidden_activation, hf, "gelu_pytorch_tanh") : parse_activation(hf, "silu");
    if (!hf.head_dim && family.default_head_dim == 0 && c.d_model % c.n_heads != 0)
        fail_input(
            hf.path,
            fmt::format("no head_dim, and the head size hidden_size / num_attention_heads = {} / {} is not whole",
                        c.d_model, c.n_heads));
    c.head_dim = hf.head_dim.value_or(family.default_head_dim > 0 ? family.default_head_dim : c.d_model / c.n_heads);
    if (family.gemma) {
        c.norm = NormKind::rms_offset_one;
        c.residual = ResidualLayout::sandwich;
        c.embedding_scale = static_cast<float>(
            std::sqrt(static_cast<double>(c.d_model)));  // transformers casts it to the model's dtype
        c.final_logit_softcap = hf.final_logit_softcapping.value_or(family.default_final_softcap);
    }
    return c;
}

// Throws Error(bad_input) naming the checkpoint unless the bias tensor `name` is `present`
// exactly when `expected` (`reason` says why it is or is not).
void expect_bias(bool present, bool expected, const std::string& name, const std::string& reason,
                 const TensorSource& source) {
    if (present == expected) return;
    fail_input(source.path(), fmt::format("tensor '{}' is {}, but {}", name, expected ? "missing" : "there", reason));
}

// Phi-3's attention: q, k and v are rows [0, H d_h), [H d_h, (H + KV) d_h) and the rest of qkv_proj.
LayerWeights fused_attention(const SafetensorsShards& source, const ModelConfig& c, const std::string& block) {
    LayerWeights w;
    w.d_model = c.d_model, w.num_heads = c.n_heads, w.num_kv_heads = c.n_kv_heads, w.d_head = c.head_dim;
    const int64_t q = c.n_heads * c.head_dim, kv = c.n_kv_heads * c.head_dim;
    const Tensor qkv =
        load_of_shape(source, fmt::format("{}self_attn.qkv_proj.weight", block), {q + 2 * kv, c.d_model});
    w.w_q = transposed(rows_of(qkv, 0, q));
    w.w_k = transposed(rows_of(qkv, q, kv));
    w.w_v = transposed(rows_of(qkv, q + kv, kv));
    w.w_o = transposed(load_of_shape(source, fmt::format("{}self_attn.o_proj.weight", block), {c.d_model, q}));
    expect_bias(source.contains(fmt::format("{}self_attn.qkv_proj.bias", block)), false,
                fmt::format("{}self_attn.qkv_proj.bias", block), "phi3 has no attention biases", source);
    return w;
}

// Block l's attention: its tensors (through the llama layout preset, or split from Phi-3's fused
// projection), biases and head size checked against config.json, then what the family changes:
// sliding window, q/k norms, Gemma's score scale, soft-cap and local RoPE base, partial rotary.
LayerWeights read_attention(const SafetensorsShards& source, const HfConfig& hf, const DecoderFamily& family,
                            const ModelConfig& c, int64_t l) {
    const std::string block = fmt::format("model.layers.{}.", l);
    LayoutOptions options;
    options.num_heads = c.n_heads;
    options.num_kv_heads = c.n_kv_heads;
    options.rope_base = c.rope_base;
    LayerWeights a = family.fused ? fused_attention(source, c, block)
                                  : load_layer(source, "llama", static_cast<int>(l), options, hf);
    if (a.d_head != c.head_dim)
        fail_input(source.path(),
                   fmt::format("tensor '{}self_attn.q_proj.weight' has {} outputs, expected {} heads x head size {}",
                               block, a.num_heads * a.d_head, c.n_heads, c.head_dim));
    a.causal = true;
    a.rope = RopeStyle::half_split;
    a.rope_base = c.rope_base;
    a.rope_scaling = hf.rope_scaling_parameters;
    a.sliding_window = sliding_window_of(hf, family, l, c.n_layers);
    if (!family.fused) {
        const bool by_config = family.attention_biases == BiasRule::by_config && hf.attention_bias.value_or(false);
        const bool qkv = by_config || family.attention_biases == BiasRule::qkv;
        const std::string why =
            family.attention_biases == BiasRule::by_config
                ? fmt::format("config.json's attention_bias is {}", by_config ? "true" : "false or absent")
            : family.attention_biases == BiasRule::qkv
                ? fmt::format("{} has q/k/v biases and none on o_proj", hf.model_type)
                : fmt::format("{} has no attention biases", hf.model_type);
        expect_bias(!a.b_q.empty(), qkv, fmt::format("{}self_attn.q_proj.bias", block), why, source);
        expect_bias(!a.b_k.empty(), qkv, fmt::format("{}self_attn.k_proj.bias", block), why, source);
        expect_bias(!a.b_v.empty(), qkv, fmt::format("{}self_attn.v_proj.bias", block), why, source);
        expect_bias(!a.b_o.empty(), by_config, fmt::format("{}self_attn.o_proj.bias", block), why, source);
    }
    if (family.qk_norm) {
        a.q_norm = load_of_shape(source, fmt::format("{}self_attn.q_norm.weight", block), {c.head_dim});
        a.k_norm = load_of_shape(source, fmt::format("{}self_attn.k_norm.weight", block), {c.head_dim});
        a.qk_norm_epsilon = c.norm_epsilon;
        a.qk_norm_offset = family.gemma ? 1.0f : 0.0f;
    }
    if (family.gemma) {
        a.score_scale = 1.0 / std::sqrt(hf.query_pre_attn_scalar.value_or(256.0));
        a.logit_softcap = family.attn_softcap ? hf.attn_logit_softcapping.value_or(family.default_attn_softcap) : 0.0;
    }
    if (family.windows == WindowRule::pattern &&
        a.sliding_window > 0) {  // Gemma 3's local layers: their own base, unscaled
        a.rope_base = hf.rope_local_base_freq.value_or(10000.0);
        a.rope_scaling = {};
    }
    if (hf.rotary_fraction && *hf.rotary_fraction != 1.0) {  // transformers: int(head_dim * partial_rotary_factor)
        a.rope_dims = static_cast<int64_t>(static_cast<double>(c.head_dim) * *hf.rotary_fraction);
        // No rotary features: transformers' inverse frequencies are empty and nothing turns.
        if (a.rope_dims == 0) a.rope = RopeStyle::none;
        if (a.rope_dims % 2 != 0)
            fail_input(hf.path,
                       fmt::format("partial_rotary_factor {} gives {} rotary features per head of {}; an "
                                   "even count is needed",
                                   json_excerpt(nlohmann::json(*hf.rotary_fraction)), a.rope_dims, c.head_dim));
    }
    return a;
}

// Step 2 for one block: its attention, norms and gated MLP (Phi-3's gate_up_proj split into
// gate and up), transposed from [out, in] to x W, with biases where mlp_bias says so.
BlockWeights read_block(const SafetensorsShards& source, const HfConfig& hf, const DecoderFamily& family,
                        const ModelConfig& c, int64_t l) {
    const int64_t d = c.d_model, f = c.ffn_dim;
    const std::string block = fmt::format("model.layers.{}.", l);
    BlockWeights b;
    b.attention = read_attention(source, hf, family, c, l);
    b.attention_norm.weight = load_of_shape(source, fmt::format("{}input_layernorm.weight", block), {d});
    if (family.gemma) {  // Gemma's post_attention_layernorm is on the attention output
        b.attention_output_norm.weight =
            load_of_shape(source, fmt::format("{}post_attention_layernorm.weight", block), {d});
        b.feed_forward_norm.weight =
            load_of_shape(source, fmt::format("{}pre_feedforward_layernorm.weight", block), {d});
        b.feed_forward_output_norm.weight =
            load_of_shape(source, fmt::format("{}post_feedforward_layernorm.weight", block), {d});
    } else {
        b.feed_forward_norm.weight =
            load_of_shape(source, fmt::format("{}post_attention_layernorm.weight", block), {d});
    }
    if (family.fused) {
        const Tensor gate_up = load_of_shape(source, fmt::format("{}mlp.gate_up_proj.weight", block), {2 * f, d});
        b.w_in = rows_of(gate_up, 0, f);
        b.w_up = rows_of(gate_up, f, f);
    } else {
        b.w_in = load_of_shape(source, fmt::format("{}mlp.gate_proj.weight", block), {f, d});
        b.w_up = load_of_shape(source, fmt::format("{}mlp.up_proj.weight", block), {f, d});
    }
    b.w_out = load_of_shape(source, fmt::format("{}mlp.down_proj.weight", block), {d, f});
    // transformers: Llama's MLP biases follow mlp_bias; the other families have none.
    const bool mlp_bias = family.mlp_bias_key && hf.mlp_bias.value_or(false);
    const std::string mlp_why = family.mlp_bias_key
                                    ? fmt::format("config.json's mlp_bias is {}", mlp_bias ? "true" : "false or absent")
                                    : fmt::format("{} has no MLP biases", hf.model_type);
    const std::pair<Tensor*, std::pair<const char*, int64_t>> biases[] = {{&b.b_in, {"mlp.gate_proj.bias", f}},
                                                                          {&b.b_out, {"mlp.down_proj.bias", d}},
                                                                          {&b.b_up, {"mlp.up_proj.bias", f}}};
    for (const auto& [bias, name_and_size] : biases) {
        const std::string name = fmt::format("{}{}", block, name_and_size.first);
        expect_bias(source.contains(name), mlp_bias, name, mlp_why, source);
        if (mlp_bias) *bias = load_of_shape(source, name, {name_and_size.second});
    }
    return b;
}

}  // namespace

const std::vector<std::string>& hf_llama_model_types() {
    static const std::vector<std::string> types = [] {
        std::vector<std::string> names;
        for (const DecoderFamily& family : decoder_families()) names.push_back(family.model_type);
        return names;
    }();
    return types;
}

ModelWeights read_hf_llama_folder(const std::string& folder, const LoadLimits& limits) {
    return read_hf_llama_folder(folder, read_hf_config((std::filesystem::path(folder) / "config.json").string()),
                                limits);
}

ModelWeights read_hf_llama_folder(const std::string& folder, const HfConfig& hf, const LoadLimits& limits) {
    const DecoderFamily& family = decoder_family(hf);
    ModelWeights w;
    w.config = llama_config(hf, family);
    const ModelConfig& c = w.config;
    const SafetensorsShards source(folder, limits);
    // Step 2: every block.
    for (int64_t l = 0; l < c.n_layers; ++l) w.layers.push_back(read_block(source, hf, family, c, l));
    const int64_t d = c.d_model;
    // Step 3: embeddings, final norm and the classifier (the embeddings when tied).
    w.token_embedding = load_of_shape(source, "model.embed_tokens.weight", {c.vocab_size, d});
    w.final_norm.weight = load_of_shape(source, "model.norm.weight", {d});
    if (!c.shared_classifier) w.classifier = load_of_shape(source, "lm_head.weight", {c.vocab_size, d});
    return w;
}

}  // namespace attn_viz
