// GPT-Neo and GPTBigCode, rows of the family table (family_table.hpp) with GPT-2's names and
// learned positions in place of RoPE. GPT-Neo: unscaled scores, a window of window_size keys on the
// layers attention_types (or attention_layers, which transformers keeps over it) calls local,
// intermediate_size 4 D when null, q/k/v without biases and out_proj with one. GPTBigCode: one
// key/value head, [q; k; v] with its bias in c_attn, scale_attn_weights. The numbers themselves are
// transformers' (tests/oracle: random folders of both).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "expect_error.hpp"
#include "model_files.hpp"
#include "safetensors.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

constexpr int64_t D = 12, V = 17, P = 9;  // three heads of 4, 9 positions

ModelWeights read_folder(const fs::path& folder, BlockLoading loading = BlockLoading::held) {
    ModelFiles files = open_model_files(folder.string());
    files.blocks = loading;
    return read_model_weights(files);
}

// A GPT-Neo folder of `layers` blocks with a feed-forward of `ffn` (as transformers names its
// tensors), config.json's `keys` after the shape's; `q_bias` adds a bias transformers' q_proj has not.
void write_gpt_neo(const fs::path& folder, int layers, int64_t ffn, const std::string& keys, bool q_bias = false) {
    std::vector<std::pair<std::string, Tensor>> tensors = {{"transformer.wte.weight", random_tensor({V, D})},
                                                           {"transformer.wpe.weight", random_tensor({P, D})},
                                                           {"transformer.ln_f.weight", random_tensor({D})},
                                                           {"transformer.ln_f.bias", random_tensor({D})}};
    for (int l = 0; l < layers; ++l) {
        const std::string p = fmt::format("transformer.h.{}.", l);
        for (const char* name : {"q_proj", "k_proj", "v_proj", "out_proj"})
            tensors.emplace_back(p + "attn.attention." + name + ".weight", random_tensor({D, D}));
        tensors.emplace_back(p + "attn.attention.out_proj.bias", random_tensor({D}));
        if (q_bias) tensors.emplace_back(p + "attn.attention.q_proj.bias", random_tensor({D}));
        for (const char* norm : {"ln_1", "ln_2"})
            for (const char* part : {".weight", ".bias"}) tensors.emplace_back(p + norm + part, random_tensor({D}));
        tensors.emplace_back(p + "mlp.c_fc.weight", random_tensor({ffn, D}));
        tensors.emplace_back(p + "mlp.c_fc.bias", random_tensor({ffn}));
        tensors.emplace_back(p + "mlp.c_proj.weight", random_tensor({D, ffn}));
        tensors.emplace_back(p + "mlp.c_proj.bias", random_tensor({D}));
    }
    fs::create_directories(folder);
    write_safetensors((folder / "model.safetensors").string(), tensors);
    write_text(folder / "config.json", fmt::format(R"({{"model_type": "gpt_neo", "hidden_size": {}, "num_heads": 3,
        "num_layers": {}, "vocab_size": {}, "max_position_embeddings": {}{}}})",
                                                   D, layers, V, P, keys));
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("gpt_neo folders: learned positions, unscaled scores, local layers as attention_types says") {
    ScratchDir dir;
    write_gpt_neo(dir / "neo", 3, 4 * D,
                  R"(, "intermediate_size": null, "window_size": 5, "activation_function": "gelu_new",
                     "attention_types": [[["global", "local"], 1], [["local"], 1]], "layer_norm_epsilon": 1e-4)");
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_folder(dir / "neo", loading);
        CHECK(w.config.family == "gpt_neo");
        CHECK(w.config.norm == NormKind::layer_norm);
        CHECK(w.config.feed_forward == FeedForwardKind::plain);
        CHECK(w.config.activation == Activation::gelu_tanh);
        CHECK(w.config.ffn_dim == 4 * D);
        CHECK(w.config.norm_epsilon == 1e-4);
        CHECK(w.config.shared_classifier);  // tie_word_embeddings: true by default
        CHECK(w.classifier.empty());
        CHECK(w.position_embedding.shape == std::vector<int64_t>{P, D});
        const std::vector<int64_t> windows = {0, 5, 5};
        for (int64_t l = 0; l < 3; ++l) {
            const BlockWeights b = w.blocks->load(l);
            CHECK(b.attention.rope == RopeStyle::none);
            CHECK(b.attention.score_scale == 1.0);
            CHECK(b.attention.sliding_window == windows[static_cast<size_t>(l)]);
            CHECK(b.attention.b_q.empty());
            CHECK(b.attention.b_o.shape == std::vector<int64_t>{D});
            CHECK(b.b_in.shape == std::vector<int64_t>{4 * D});
            CHECK(b.attention_norm.bias.shape == std::vector<int64_t>{D});
        }
    }
    // attention_layers, as save_pretrained writes it beside attention_types, is what transformers runs.
    write_gpt_neo(dir / "layers", 2, 7,
                  R"(, "intermediate_size": 7, "attention_types": [[["global", "local"], 1]],
                     "attention_layers": ["local", "global"])");
    const ModelWeights layers = read_folder(dir / "layers");
    CHECK(layers.blocks->load(0).attention.sliding_window == 256);  // window_size's default
    CHECK(layers.blocks->load(1).attention.sliding_window == 0);
}

TEST_CASE("gpt_neo folders that transformers would run otherwise, or not at all, are refused by name") {
    ScratchDir dir;
    const auto refused = [&](const std::string& name, int layers, const std::string& keys,
                             const std::vector<std::string>& message, bool q_bias = false) {
        write_gpt_neo(dir / name, layers, 7, R"(, "intermediate_size": 7)" + keys, q_bias);
        expect_error(
            ErrorKind::bad_input, [&] { read_folder(dir / name); }, message);
    };
    // Without attention_types, transformers' default is 24 layers, global and local alternating.
    refused("default", 2, "", {"config.json", "attention_types gives 24 layers, num_layers is 2"});
    refused("count", 2, R"(, "attention_types": [[["global"], 3]])",
            {"config.json", "attention_types gives 3 layers, num_layers is 2"});
    for (const char* types : {R"("local")", R"([["local", 2]])", R"([[["local"], 0]])", R"([[["sparse"], 2]])",
                              R"([[[], 2]])", R"([[["local"], 16777217]])"})
        refused("types", 2, fmt::format(R"(, "attention_types": {})", types),
                {"config.json", "\"attention_types\" is", "expected [[kinds, repeats], ...]"});
    refused("layers", 2, R"(, "attention_layers": ["global", "dense"])",
            {"config.json", "\"attention_layers\" is [\"global\",\"dense\"], expected a list of"});
    refused("bias", 2, R"(, "attention_types": [[["global"], 2]])",
            {"'transformer.h.0.attn.attention.q_proj.bias' is there, but gpt_neo has no q/k/v biases"}, true);
    refused("window", 2, R"(, "attention_types": [[["local"], 2]], "window_size": 0)",
            {"config.json", "\"window_size\" is 0, expected a positive integer"});
}

TEST_CASE("gpt_bigcode folders: one key/value head in c_attn with its bias, learned positions, scale_attn_weights") {
    ScratchDir dir;
    const int64_t d_h = D / 3, F = 4 * D;
    const auto write_bigcode = [&](const std::string& name, const std::string& keys) {
        std::vector<std::pair<std::string, Tensor>> tensors = {{"transformer.wte.weight", random_tensor({V, D})},
                                                               {"transformer.wpe.weight", random_tensor({P, D})},
                                                               {"transformer.ln_f.weight", random_tensor({D})},
                                                               {"transformer.ln_f.bias", random_tensor({D})}};
        const std::vector<std::pair<std::string, std::vector<int64_t>>> matrices = {
            {"attn.c_attn", {D + 2 * d_h, D}}, {"attn.c_proj", {D, D}}, {"mlp.c_fc", {F, D}}, {"mlp.c_proj", {D, F}}};
        for (const auto& [matrix, shape] : matrices) {
            tensors.emplace_back("transformer.h.0." + matrix + ".weight", random_tensor(shape));
            tensors.emplace_back("transformer.h.0." + matrix + ".bias", random_tensor({shape[0]}));
        }
        for (const char* norm : {"ln_1", "ln_2"})
            for (const char* part : {".weight", ".bias"})
                tensors.emplace_back(std::string("transformer.h.0.") + norm + part, random_tensor({D}));
        const fs::path folder = dir / name;
        fs::create_directories(folder);
        write_safetensors((folder / "model.safetensors").string(), tensors);
        write_text(folder / "config.json",
                   fmt::format(R"({{"model_type": "gpt_bigcode", "n_embd": {}, "n_head": 3, "n_layer": 1,
                       "n_inner": null, "vocab_size": {}, "n_positions": {}{}}})",
                               D, V, P, keys));
        return tensors[4].second;  // c_attn's weight
    };
    const Tensor c_attn = write_bigcode("bigcode", R"(, "multi_query": true)");
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_folder(dir / "bigcode", loading);
        CHECK(w.config.family == "gpt_bigcode");
        CHECK(w.config.n_kv_heads == 1);
        CHECK(w.config.ffn_dim == F);
        CHECK(w.config.activation == Activation::gelu_tanh);
        CHECK(w.position_embedding.shape == std::vector<int64_t>{P, D});
        const BlockWeights b = w.blocks->load(0);
        CHECK(b.attention.rope == RopeStyle::none);
        CHECK(b.attention.score_scale == 0.0);  // 1 / sqrt(d_h)
        CHECK(b.attention.b_q.shape == std::vector<int64_t>{D});
        CHECK(b.attention.b_k.shape == std::vector<int64_t>{d_h});
        CHECK(b.attention.b_v.shape == std::vector<int64_t>{d_h});
        // x W: w_k's column j is c_attn's row D + j (the key head after the queries).
        REQUIRE(b.attention.w_k.shape == std::vector<int64_t>{D, d_h});
        CHECK(b.attention.w_k.data[1 * d_h + 2] == c_attn.data[(D + 2) * D + 1]);
    }
    write_bigcode("unscaled", R"(, "scale_attn_weights": false)");  // multi_query: true when absent
    CHECK(read_folder(dir / "unscaled").blocks->load(0).attention.score_scale == 1.0);
    write_bigcode("heads", R"(, "multi_query": false)");
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "heads"); },
                 {"config.json", "multi_query = false is not supported"});
}

}  // TEST_SUITE("models")
