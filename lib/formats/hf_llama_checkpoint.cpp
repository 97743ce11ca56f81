#include "hf_llama_checkpoint.hpp"

#include <algorithm>
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
Llama2cConfig llama_config(const HfConfig& hf) {
    require_supported(hf, "model_type", hf.model_type, hf_llama_model_types());
    if (!hf.rope_scaling.empty()) require_supported(hf, "rope_scaling", hf.rope_scaling, rope_scaling_types());
    Llama2cConfig c;
    c.dim = required_value(hf.d_model, hf, "hidden_size");
    c.hidden_dim = required_value(hf.intermediate_size, hf, "intermediate_size");
    c.n_layers = required_value(hf.num_layers, hf, "num_hidden_layers");
    c.n_heads = required_value(hf.num_heads, hf, "num_attention_heads");
    c.n_kv_heads = hf.num_kv_heads.value_or(c.n_heads);
    c.vocab_size = required_value(hf.vocab_size, hf, "vocab_size");
    c.seq_len = required_value(hf.max_positions, hf, "max_position_embeddings");
    c.shared_classifier = hf.tie_word_embeddings.value_or(false);  // LlamaConfig's default
    c.rms_epsilon = hf.norm_epsilon.value_or(1e-6);                 // LlamaConfig's default
    c.rope_base = hf.rope_base.value_or(10000.0);
    if (c.dim % c.n_heads != 0 || (hf.head_dim && *hf.head_dim != c.dim / c.n_heads))
        fail_input(hf.path, "a head size other than hidden_size / num_attention_heads is not supported");
    return c;
}

}  // namespace

const std::vector<std::string>& hf_llama_model_types() {
    static const std::vector<std::string> types = {"llama", "mistral", "qwen2"};
    return types;
}

LlamaWeights read_hf_llama_folder(const std::string& folder, const LoadLimits& limits) {
    const HfConfig hf = read_hf_config((std::filesystem::path(folder) / "config.json").string());
    LlamaWeights w;
    w.config = llama_config(hf);
    const Llama2cConfig& c = w.config;
    const SafetensorsShards source(folder, limits);
    // Step 2: every block: attention through the llama layout preset, norms and the SwiGLU MLP
    // transposed from [out, in] to x W.
    LayoutOptions options;
    options.num_heads = c.n_heads;
    options.num_kv_heads = c.n_kv_heads;
    options.rope_base = c.rope_base;
    const int64_t d = c.dim, f = c.hidden_dim;
    for (int64_t l = 0; l < c.n_layers; ++l) {
        const std::string block = "model.layers." + std::to_string(l) + ".";
        LlamaBlockWeights b;
        b.attention = load_layer(source, "llama", static_cast<int>(l), options, hf);
        b.rms_attention = load_of_shape(source, block + "input_layernorm.weight", {d});
        b.rms_ffn = load_of_shape(source, block + "post_attention_layernorm.weight", {d});
        b.w1 = transposed(load_of_shape(source, block + "mlp.gate_proj.weight", {f, d}));
        b.w2 = transposed(load_of_shape(source, block + "mlp.down_proj.weight", {d, f}));
        b.w3 = transposed(load_of_shape(source, block + "mlp.up_proj.weight", {f, d}));
        w.layers.push_back(std::move(b));
    }
    // Step 3: embeddings, final norm and the classifier (the embeddings when tied).
    w.token_embedding = load_of_shape(source, "model.embed_tokens.weight", {c.vocab_size, d});
    w.rms_final = load_of_shape(source, "model.norm.weight", {d});
    w.classifier = transposed(c.shared_classifier ? w.token_embedding : load_of_shape(source, "lm_head.weight", {c.vocab_size, d}));
    return w;
}

}  // namespace attn_viz
