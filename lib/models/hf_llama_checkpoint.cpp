#include "hf_llama_checkpoint.hpp"

#include <algorithm>
#include <utility>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "hf_config.hpp"
#include "json_input.hpp"
#include "layouts.hpp"
#include "safetensors_shards.hpp"

namespace attn_viz {

namespace {

// Throws Error(bad_input) naming config.json unless `value` (of `key`) is one of `supported`.
void require_supported(const HfConfig& hf, const char* key, const std::string& value, const std::vector<std::string>& supported) {
    if (std::find(supported.begin(), supported.end(), value) != supported.end()) return;
    std::string known;
    for (const std::string& name : supported) known += (known.empty() ? "" : ", ") + name;
    fail_input(hf.path, std::string(key) + " " + json_excerpt(nlohmann::json(value)) + " is not supported (supported: " + known + ")");
}

// Step 1 of reading a folder: the hyper-parameters, refusing what the forward pass cannot do.
ModelConfig llama_config(const HfConfig& hf) {
    require_supported(hf, "model_type", hf.model_type, hf_llama_model_types());
    if (!hf.rope_scaling.empty()) require_supported(hf, "rope_scaling", hf.rope_scaling, rope_scaling_types());
    refuse_unimplemented(hf);
    if (hf.rotary_fraction && *hf.rotary_fraction != 1.0)
        fail_input(hf.path, "partial_rotary_factor " + json_excerpt(nlohmann::json(*hf.rotary_fraction)) + " is not supported for " +
                                hf.model_type + " (transformers' " + hf.model_type + " turns whole heads)");
    ModelConfig c;  // RMSNorm, gated feed-forward, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
    c.d_model = required_value(hf.d_model, hf, "hidden_size");
    c.ffn_dim = required_value(hf.intermediate_size, hf, "intermediate_size");
    c.n_layers = required_value(hf.num_layers, hf, "num_hidden_layers");
    c.n_heads = required_value(hf.num_heads, hf, "num_attention_heads");
    c.n_kv_heads = hf.num_kv_heads.value_or(c.n_heads);
    c.vocab_size = required_value(hf.vocab_size, hf, "vocab_size");
    c.max_tokens = required_value(hf.max_positions, hf, "max_position_embeddings");
    c.shared_classifier = hf.tie_word_embeddings.value_or(false);  // LlamaConfig's default
    c.norm_epsilon = hf.norm_epsilon.value_or(1e-6);                 // LlamaConfig's default
    c.rope_base = hf.rope_base.value_or(10000.0);
    c.activation = parse_activation(hf, "silu");
    if (!hf.head_dim && c.d_model % c.n_heads != 0)
        fail_input(hf.path, "no head_dim, and the head size hidden_size / num_attention_heads = " + std::to_string(c.d_model) + " / " +
                                std::to_string(c.n_heads) + " is not whole");
    c.head_dim = hf.head_dim.value_or(c.d_model / c.n_heads);
    return c;
}

// The keys each query of block `layer` sees (0: every earlier key), as transformers' configs
// decide it (sliding_window absent: 4096; null: none): Mistral's sliding_window on every layer; Qwen2's sliding_window
// (default 4096) only with use_sliding_window, on layers from max_window_layers (default 28) on;
// layer_types, when given, choosing the sliding layers of both. Llama has no sliding window.
int64_t sliding_window_of(const HfConfig& hf, int64_t layer, int64_t layers) {
    if (hf.model_type == "llama") return 0;
    const bool qwen2 = hf.model_type == "qwen2";
    if (qwen2 && !hf.use_sliding_window.value_or(false)) return 0;
    if (!hf.layer_types.empty() && static_cast<int64_t>(hf.layer_types.size()) != layers)
        fail_input(hf.path, "layer_types lists " + std::to_string(hf.layer_types.size()) + " layers, num_hidden_layers is " +
                                std::to_string(layers));
    const bool sliding = !hf.layer_types.empty() ? hf.layer_types[static_cast<size_t>(layer)] == "sliding_attention"
                         : qwen2                 ? layer >= hf.max_window_layers.value_or(28)
                                                 : true;
    return sliding ? hf.sliding_window.value_or(4096) : 0;
}

// Throws Error(bad_input) naming the checkpoint unless the bias tensor `name` is `present`
// exactly when `expected` (`reason` says why it is or is not).
void expect_bias(bool present, bool expected, const std::string& name, const std::string& reason, const TensorSource& source) {
    if (present == expected) return;
    fail_input(source.path(), "tensor '" + name + "' is " + (expected ? "missing" : "there") + ", but " + reason);
}

// Step 2 for one block: the attention through the llama layout preset, its biases and head size
// checked against config.json, its sliding window; norms and the gated MLP transposed from
// [out, in] to x W, with their biases when mlp_bias says so.
BlockWeights read_block(const SafetensorsShards& source, const HfConfig& hf, const ModelConfig& c, int64_t l) {
    LayoutOptions options;
    options.num_heads = c.n_heads;
    options.num_kv_heads = c.n_kv_heads;
    options.rope_base = c.rope_base;
    const int64_t d = c.d_model, f = c.ffn_dim;
    const std::string block = "model.layers." + std::to_string(l) + ".";
    BlockWeights b;
    b.attention = load_layer(source, "llama", static_cast<int>(l), options, hf);
    const int64_t head_dim = hf.head_dim.value_or(c.d_model / c.n_heads);
    if (b.attention.d_head != head_dim)
        fail_input(source.path(), "tensor '" + block + "self_attn.q_proj.weight' has " + std::to_string(b.attention.num_heads * b.attention.d_head) +
                                      " outputs, expected " + std::to_string(c.n_heads) + " heads x head size " + std::to_string(head_dim));
    b.attention.sliding_window = sliding_window_of(hf, l, c.n_layers);
    // transformers: Llama's q/k/v/o biases follow attention_bias, Qwen2 has q/k/v biases, Mistral none.
    const bool llama = hf.model_type == "llama", qwen2 = hf.model_type == "qwen2";
    const bool attention_bias = llama && hf.attention_bias.value_or(false);
    const std::string why = llama ? "config.json's attention_bias is " + std::string(attention_bias ? "true" : "false or absent")
                                  : qwen2 ? "qwen2 has q/k/v biases and none on o_proj" : hf.model_type + " has no attention biases";
    expect_bias(!b.attention.b_q.empty(), attention_bias || qwen2, block + "self_attn.q_proj.bias", why, source);
    expect_bias(!b.attention.b_k.empty(), attention_bias || qwen2, block + "self_attn.k_proj.bias", why, source);
    expect_bias(!b.attention.b_v.empty(), attention_bias || qwen2, block + "self_attn.v_proj.bias", why, source);
    expect_bias(!b.attention.b_o.empty(), attention_bias, block + "self_attn.o_proj.bias", why, source);
    b.attention_norm.weight = load_of_shape(source, block + "input_layernorm.weight", {d});
    b.feed_forward_norm.weight = load_of_shape(source, block + "post_attention_layernorm.weight", {d});
    b.w_in = transposed(load_of_shape(source, block + "mlp.gate_proj.weight", {f, d}));
    b.w_out = transposed(load_of_shape(source, block + "mlp.down_proj.weight", {d, f}));
    b.w_up = transposed(load_of_shape(source, block + "mlp.up_proj.weight", {f, d}));
    // transformers: Llama's MLP biases follow mlp_bias; Mistral and Qwen2 have none.
    const bool mlp_bias = llama && hf.mlp_bias.value_or(false);
    const std::string mlp_why = llama ? "config.json's mlp_bias is " + std::string(mlp_bias ? "true" : "false or absent")
                                      : hf.model_type + " has no MLP biases";
    const std::pair<Tensor*, std::pair<const char*, int64_t>> biases[] = {
        {&b.b_in, {"mlp.gate_proj.bias", f}}, {&b.b_out, {"mlp.down_proj.bias", d}}, {&b.b_up, {"mlp.up_proj.bias", f}}};
    for (const auto& [bias, name_and_size] : biases) {
        const std::string name = block + name_and_size.first;
        expect_bias(source.contains(name), mlp_bias, name, mlp_why, source);
        if (mlp_bias) *bias = load_of_shape(source, name, {name_and_size.second});
    }
    return b;
}

}  // namespace

const std::vector<std::string>& hf_llama_model_types() {
    static const std::vector<std::string> types = {"llama", "mistral", "qwen2"};
    return types;
}

ModelWeights read_hf_llama_folder(const std::string& folder, const LoadLimits& limits) {
    return read_hf_llama_folder(folder, read_hf_config((std::filesystem::path(folder) / "config.json").string()), limits);
}

ModelWeights read_hf_llama_folder(const std::string& folder, const HfConfig& hf, const LoadLimits& limits) {
    ModelWeights w;
    w.config = llama_config(hf);
    const ModelConfig& c = w.config;
    const SafetensorsShards source(folder, limits);
    // Step 2: every block.
    for (int64_t l = 0; l < c.n_layers; ++l) w.layers.push_back(read_block(source, hf, c, l));
    const int64_t d = c.d_model;
    // Step 3: embeddings, final norm and the classifier (the embeddings when tied).
    w.token_embedding = load_of_shape(source, "model.embed_tokens.weight", {c.vocab_size, d});
    w.final_norm.weight = load_of_shape(source, "model.norm.weight", {d});
    w.classifier = transposed(c.shared_classifier ? w.token_embedding : load_of_shape(source, "lm_head.weight", {c.vocab_size, d}));
    return w;
}

}  // namespace attn_viz
