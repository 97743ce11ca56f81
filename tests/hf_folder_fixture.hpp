// The model folders of the fuzz target fuzz_hf_folder (tests/fuzz/fuzz_hf_folder.cpp), shared with
// the replay of its findings (tests/models/test_reliability_fuzz.cpp): fixed random weights of a
// small llama model (hidden 8, 2 heads, 1 KV head, 2 layers, ffn 12, vocab 16) as model.safetensors
// in one folder and as two shards in another; an input is config.json and, after a NUL byte,
// model.safetensors.index.json, which send it to the sharded folder. write_hf_fixture_model adds the
// config.json and index of that model, for tests that read it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"
#include "safetensors.hpp"

namespace test_support {

struct HfFixtureFolders {
    std::filesystem::path single, sharded;
    std::vector<std::vector<std::string>> shard_names;  // the tensors of each of sharded's two files
};

// Writes the two folders under `root` (created if needed).
inline HfFixtureFolders write_hf_fixture_folders(const std::filesystem::path& root) {
    using attn_viz::Tensor;
    using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
    std::mt19937 rng(20261123);
    std::normal_distribution<float> normal(0.0f, 0.5f);
    auto random_tensor = [&](std::vector<int64_t> shape) {
        Tensor t(std::move(shape));
        for (float& v : t.data) v = normal(rng);
        return t;
    };
    const int64_t d = 8, kv = 4, f = 12, vocab = 16;
    NamedTensors tensors = {{"model.embed_tokens.weight", random_tensor({vocab, d})},
                            {"model.norm.weight", random_tensor({d})},
                            {"lm_head.weight", random_tensor({vocab, d})}};
    const std::vector<std::pair<std::string, std::vector<int64_t>>> block = {
        {"self_attn.q_proj.weight", {d, d}},     {"self_attn.k_proj.weight", {kv, d}},
        {"self_attn.v_proj.weight", {kv, d}},    {"self_attn.o_proj.weight", {d, d}},
        {"mlp.gate_proj.weight", {f, d}},        {"mlp.up_proj.weight", {f, d}},
        {"mlp.down_proj.weight", {d, f}},        {"input_layernorm.weight", {d}},
        {"post_attention_layernorm.weight", {d}}};
    for (int layer = 0; layer < 2; ++layer)
        for (const auto& [name, shape] : block)
            tensors.emplace_back("model.layers." + std::to_string(layer) + "." + name, random_tensor(shape));

    HfFixtureFolders folders{root / "single", root / "sharded", {{}, {}}};
    std::filesystem::create_directories(folders.single);
    std::filesystem::create_directories(folders.sharded);
    attn_viz::write_safetensors((folders.single / "model.safetensors").string(), tensors);
    const auto middle = tensors.begin() + static_cast<std::ptrdiff_t>(tensors.size() / 2);
    for (auto t = tensors.begin(); t != tensors.end(); ++t) folders.shard_names[t < middle ? 0 : 1].push_back(t->first);
    attn_viz::write_safetensors((folders.sharded / "model-00001-of-00002.safetensors").string(),
                                NamedTensors(tensors.begin(), middle));
    attn_viz::write_safetensors((folders.sharded / "model-00002-of-00002.safetensors").string(),
                                NamedTensors(middle, tensors.end()));
    return folders;
}

// Writes an input's config.json (and index) into the folder it is for, and returns that folder.
inline std::filesystem::path place_hf_fixture_input(const HfFixtureFolders& folders, const uint8_t* data, size_t size) {
    auto write = [](const std::filesystem::path& path, const uint8_t* bytes, size_t count) {
        FILE* f = std::fopen(path.c_str(), "wb");
        if (!f || (count && std::fwrite(bytes, 1, count, f) != count))
            throw attn_viz::Error(attn_viz::ErrorKind::io, path.string() + ": cannot write");
        std::fclose(f);
    };
    const auto* nul = size ? static_cast<const uint8_t*>(std::memchr(data, 0, size)) : nullptr;
    const size_t config_size = nul ? static_cast<size_t>(nul - data) : size;
    const std::filesystem::path& folder = nul ? folders.sharded : folders.single;
    write(folder / "config.json", data, config_size);
    if (nul) write(folder / "model.safetensors.index.json", nul + 1, size - config_size - 1);
    return folder;
}

// The two folders under `root` with the model's config.json in each and the sharded one's index: a
// small Llama-family decoder to read.
inline HfFixtureFolders write_hf_fixture_model(const std::filesystem::path& root) {
    const HfFixtureFolders folders = write_hf_fixture_folders(root);
    const std::string config =
        R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2, )"
        R"("num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 16, "max_position_embeddings": 32, )"
        R"("rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": false})";
    std::string index = R"({"metadata": {}, "weight_map": {)";
    for (size_t shard = 0; shard < 2; ++shard)
        for (const std::string& name : folders.shard_names[shard])
            index += (index.back() == '{' ? "\"" : ", \"") + name + "\": \"model-0000" + std::to_string(shard + 1) +
                     "-of-00002.safetensors\"";
    index += "}}";
    const std::string sharded = config + '\0' + index;
    place_hf_fixture_input(folders, reinterpret_cast<const uint8_t*>(config.data()), config.size());
    place_hf_fixture_input(folders, reinterpret_cast<const uint8_t*>(sharded.data()), sharded.size());
    return folders;
}

}  // namespace test_support
