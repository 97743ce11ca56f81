// Files of the Llama-like rows of the family table for the tests of tests/models: a two-block
// Hugging Face folder and a one-block GGUF file, with a row's norms, biases, keys and extra tensors.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gguf_builder.hpp"
#include "model_files.hpp"
#include "safetensors.hpp"
#include "support.hpp"

namespace row_files {

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

constexpr int64_t D = 16, KV = 8, F = 12, V = 20;  // two heads of 8, one KV head

// A vector tensor a test adds to a row's own.
struct ExtraTensor {
    std::string name;
    int64_t size = D;
};

inline ModelWeights read_row_folder(const fs::path& folder, BlockLoading loading = BlockLoading::held) {
    ModelFiles files = open_model_files(folder.string());
    files.blocks = loading;
    return read_model_weights(files);
}

// A two-block folder of a Llama-like row: its LayerNorms (`norms` in each block, with biases; a
// final one unless `norms` is empty), q/k/v biases with `qkv_biases`, `extra` tensors besides,
// config.json's `keys` after the shape's.
struct RowFolder {
    std::string model_type = "stablelm";
    std::vector<std::string> norms = {"input_layernorm", "post_attention_layernorm"};
    bool qkv_biases = false;
    std::string keys = {};
    std::vector<ExtraTensor> extra = {};
};
inline void write_row_folder(const fs::path& folder, const RowFolder& row) {
    std::vector<std::pair<std::string, Tensor>> tensors = {{"model.embed_tokens.weight", random_tensor({V, D})},
                                                           {"lm_head.weight", random_tensor({V, D})}};
    if (!row.norms.empty())
        tensors.insert(tensors.end(),
                       {{"model.norm.weight", random_tensor({D})}, {"model.norm.bias", random_tensor({D})}});
    const std::vector<std::pair<std::string, std::vector<int64_t>>> block = {
        {"self_attn.q_proj", {D, D}}, {"self_attn.k_proj", {KV, D}}, {"self_attn.v_proj", {KV, D}},
        {"self_attn.o_proj", {D, D}}, {"mlp.gate_proj", {F, D}},     {"mlp.up_proj", {F, D}},
        {"mlp.down_proj", {D, F}}};
    for (int l = 0; l < 2; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        for (const auto& [name, shape] : block) {
            tensors.emplace_back(p + name + ".weight", random_tensor(shape));
            if (row.qkv_biases && name != "self_attn.o_proj" && name.starts_with("self_attn."))
                tensors.emplace_back(p + name + ".bias", random_tensor({shape[0]}));
        }
        for (const std::string& norm : row.norms)
            for (const char* part : {".weight", ".bias"}) tensors.emplace_back(p + norm + part, random_tensor({D}));
    }
    for (const ExtraTensor& t : row.extra) tensors.emplace_back(t.name, random_tensor({t.size}));
    fs::create_directories(folder);
    write_safetensors((folder / "model.safetensors").string(), tensors);
    write_text(folder / "config.json", R"({"model_type": ")" + row.model_type + R"(", "hidden_size": 16,
                       "num_attention_heads": 2, "num_key_value_heads": 1, "num_hidden_layers": 2,
                       "intermediate_size": 12, "vocab_size": 20, "max_position_embeddings": 16)" +
                                           row.keys + "}");
}

// A one-block GGUF file of `architecture` (its LayerNorms `norms`, with biases; a final one unless
// `norms` is empty), `keys` besides the shape's, `extra` tensors besides, and what `more_keys` adds.
inline void write_row_gguf(const fs::path& path, const std::string& architecture, const std::vector<std::string>& norms,
                           const std::vector<std::pair<std::string, uint32_t>>& keys = {},
                           const std::vector<ExtraTensor>& extra = {},
                           const std::function<void(GgufBuilder&)>& more_keys = {}) {
    GgufBuilder g;
    g.add_string("general.architecture", architecture);
    std::vector<std::pair<std::string, uint32_t>> counts = {
        {"block_count", 1},          {"embedding_length", D},        {"feed_forward_length", F},
        {"attention.head_count", 2}, {"attention.head_count_kv", 1}, {"context_length", 16}};
    counts.insert(counts.end(), keys.begin(), keys.end());
    for (const auto& [key, value] : counts) g.add_u32(architecture + "." + key, value);
    g.add_f32(architecture + ".attention.layer_norm_epsilon", 1e-6f);
    if (more_keys) more_keys(g);
    const auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
        g.add_f32_tensor(name, {shape.rbegin(), shape.rend()}, random_tensor(shape).data);
    };
    tensor("token_embd.weight", {V, D}), tensor("output.weight", {V, D});
    if (!norms.empty()) tensor("output_norm.weight", {D}), tensor("output_norm.bias", {D});
    for (const std::string& norm : norms)
        tensor("blk.0." + norm + ".weight", {D}), tensor("blk.0." + norm + ".bias", {D});
    tensor("blk.0.attn_q.weight", {D, D}), tensor("blk.0.attn_k.weight", {KV, D});
    tensor("blk.0.attn_v.weight", {KV, D}), tensor("blk.0.attn_output.weight", {D, D});
    tensor("blk.0.attn_q.bias", {D});
    tensor("blk.0.ffn_gate.weight", {F, D}), tensor("blk.0.ffn_up.weight", {F, D});
    tensor("blk.0.ffn_down.weight", {D, F});
    for (const ExtraTensor& t : extra) tensor(t.name, {t.size});
    write_text(path, g.bytes());
}

}  // namespace row_files
