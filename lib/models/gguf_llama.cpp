// Llama hyper-parameters, weights and tokenizer from a GGUF file's metadata and tensors.
#include "gguf_llama.hpp"

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "gguf_transformer.hpp"
#include "json_input.hpp"
#include "llama2c_checkpoint.hpp"
#include "tensor.hpp"

namespace attn_viz {
namespace {

int64_t required_count(const GgufFile& file, const std::string& key) { return gguf_required_count(file, key, "llama"); }

void check_tensor(const GgufFile& file, const std::string& name, const std::vector<int64_t>& shape) {
    gguf_check_tensor(file, name, shape, "llama");
}

Tensor load_shaped(const GgufFile& file, const std::string& name, const std::vector<int64_t>& shape) {
    return gguf_load_shaped(file, name, shape, "llama");
}

struct BlockTensor {
    std::string name;
    std::vector<int64_t> shape;  // row-major; matrices [out, in]
};

// Block `layer`'s tensors in the order read_gguf_llama_block takes them: attn_q, attn_k, attn_v,
// attn_output, attn_norm, ffn_norm, ffn_gate, ffn_down, ffn_up.
std::vector<BlockTensor> block_tensors(const ModelConfig& c, int64_t layer) {
    const int64_t d = c.d_model, f = c.ffn_dim, kv = c.n_kv_heads * (c.d_model / c.n_heads);
    const std::string p = "blk." + std::to_string(layer) + ".";
    return {{p + "attn_q.weight", {d, d}},      {p + "attn_k.weight", {kv, d}},   {p + "attn_v.weight", {kv, d}},
            {p + "attn_output.weight", {d, d}}, {p + "attn_norm.weight", {d}},    {p + "ffn_norm.weight", {d}},
            {p + "ffn_gate.weight", {f, d}},    {p + "ffn_down.weight", {d, f}},  {p + "ffn_up.weight", {f, d}}};
}

void check_gguf_llama_block(const GgufFile& file, const ModelConfig& c, int64_t layer) {
    for (const BlockTensor& t : block_tensors(c, layer)) check_tensor(file, t.name, t.shape);
}

// Metadata that changes llama.cpp's forward pass of some architecture and that attn-viz does not
// implement for llama: a sliding window (llama.cpp applies none to llama either, so a file that
// names one was meant for another architecture), key/value head sizes other than the head size,
// mixture-of-experts blocks and logit soft-capping. Error(bad_input) naming the key and its value.
void refuse_unimplemented_gguf_keys(const GgufFile& file, int64_t head) {
    for (const char* key : {"llama.attention.sliding_window", "llama.expert_count", "llama.attn_logit_softcapping",
                            "llama.final_logit_softcapping", "llama.attention.key_length", "llama.attention.value_length"}) {
        if (!file.has(key)) continue;
        const std::optional<double> value = file.get_float(key);
        const bool head_size = std::string(key).find("_length") != std::string::npos;
        if (head_size && value && *value == static_cast<double>(head)) continue;
        if (std::string(key) == "llama.expert_count" && value && *value == 0) continue;
        const bool whole = value && *value == std::floor(*value) && std::fabs(*value) < 1e15;
        const std::string text = whole ? std::to_string(static_cast<long long>(*value)) : value ? json_excerpt(nlohmann::json(*value)) : "<not a number>";
        fail_input(file.path(), std::string(key) + " = " + text + " is not supported" + (head_size ? " (only the head size " + std::to_string(head) + ")" : ""));
    }
}

}  // namespace

ModelConfig gguf_llama_config(const GgufFile& file) {
    const std::string architecture = file.get_string("general.architecture").value_or("");
    if (architecture != "llama") {
        std::string supported = "llama";
        for (const std::string& other : gguf_transformer_architectures()) supported += ", " + other;
        fail_input(file.path(), "general.architecture is \"" + architecture + "\"; attn-viz runs GGUF models of architecture " + supported);
    }
    ModelConfig c;  // RMSNorm, gated SiLU, pre-norm: ModelConfig's defaults
    c.architecture = "llama";
    c.n_layers = required_count(file, "llama.block_count");
    c.d_model = required_count(file, "llama.embedding_length");
    c.ffn_dim = required_count(file, "llama.feed_forward_length");
    c.n_heads = required_count(file, "llama.attention.head_count");
    c.n_kv_heads = file.has("llama.attention.head_count_kv") ? required_count(file, "llama.attention.head_count_kv") : c.n_heads;
    c.max_tokens = required_count(file, "llama.context_length");
    const GgufTensorInfo* embedding = file.find_tensor("token_embd.weight");
    if (!embedding || embedding->dims.size() != 2) fail_input(file.path(), "has no 2-D tensor \"token_embd.weight\"");
    c.vocab_size = embedding->dims[1];
    c.shared_classifier = file.find_tensor("output.weight") == nullptr;
    c.norm_epsilon = file.get_float("llama.attention.layer_norm_rms_epsilon").value_or(1e-5);
    c.rope_base = file.get_float("llama.rope.freq_base").value_or(10000.0);
    validate_llama_config(c, file.path(), "GGUF llama metadata", "");
    c.head_dim = c.d_model / c.n_heads;
    if (!(c.norm_epsilon > 0 && c.norm_epsilon < 1))
        fail_input(file.path(), "llama.attention.layer_norm_rms_epsilon " + std::to_string(c.norm_epsilon) + " is outside (0, 1)");
    if (!(c.rope_base > 1 && c.rope_base < 1e12))
        fail_input(file.path(), "llama.rope.freq_base " + std::to_string(c.rope_base) + " is outside (1, 1e12)");
    const int64_t head = c.d_model / c.n_heads;
    if (file.has("llama.rope.dimension_count") && required_count(file, "llama.rope.dimension_count") != head)
        fail_input(file.path(), "llama.rope.dimension_count is not the head size " + std::to_string(head) + " (partial RoPE is not supported)");
    if (file.find_tensor("rope_freqs.weight") || file.has("llama.rope.scaling.type"))
        if (file.get_string("llama.rope.scaling.type").value_or("scaled") != "none")
            fail_input(file.path(), "uses scaled RoPE (rope_freqs or llama.rope.scaling), which attn-viz does not support");
    refuse_unimplemented_gguf_keys(file, head);
    return c;
}

BlockWeights read_gguf_llama_block(const GgufFile& file, const ModelConfig& c, int64_t layer) {
    const std::vector<BlockTensor> t = block_tensors(c, layer);
    auto load = [&](size_t i) { return load_shaped(file, t[i].name, t[i].shape); };
    // GGUF matrices are [out, in] row-major (dims [in, out]); BlockWeights wants x W.
    auto matrix = [&](size_t i) { return transposed(load(i)); };
    BlockWeights block;
    block.attention = llama_attention_weights(c, matrix(0), matrix(1), matrix(2), matrix(3), file.path() + ": layer " + std::to_string(layer));
    block.attention_norm.weight = load(4);
    block.feed_forward_norm.weight = load(5);
    block.w_in = matrix(6);
    block.w_out = matrix(7);
    block.w_up = matrix(8);
    return block;
}

namespace {

// Configuration, embedding, final norm and classifier: everything but the blocks.
ModelWeights read_outside_blocks(const GgufFile& file) {
    ModelWeights w;
    w.config = gguf_llama_config(file);
    gguf_check_model_tensors(file);
    const ModelConfig& c = w.config;
    w.token_embedding = load_shaped(file, "token_embd.weight", {c.vocab_size, c.d_model});
    w.final_norm.weight = load_shaped(file, "output_norm.weight", {c.d_model});
    w.classifier = transposed(c.shared_classifier ? w.token_embedding : load_shaped(file, "output.weight", {c.vocab_size, c.d_model}));
    return w;
}

}  // namespace

ModelWeights read_gguf_llama(const GgufFile& file) {
    ModelWeights w = read_outside_blocks(file);
    for (int64_t l = 0; l < w.config.n_layers; ++l) w.layers.push_back(read_gguf_llama_block(file, w.config, l));
    return w;
}

ModelWeights read_gguf_llama_streaming(std::shared_ptr<const GgufFile> file) {
    ModelWeights w = read_outside_blocks(*file);
    // Every block's tensors are checked now (names, shapes, decodable types), so a bad file fails
    // before the forward pass rather than at its last layer.
    for (int64_t l = 0; l < w.config.n_layers; ++l) check_gguf_llama_block(*file, w.config, l);
    w.load_block = [file, config = w.config](int64_t layer) { return read_gguf_llama_block(*file, config, layer); };
    return w;
}

}  // namespace attn_viz
