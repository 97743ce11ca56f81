// OPT, a row of the family table: learned positions whose first two rows are unused, norms before
// the sublayers or (do_layer_norm_before false) after each residual add without a final norm,
// biases as enable_bias says; what transformers' OPTDecoder does beyond that (project_in / out,
// norms without weights) refused by name. The numbers themselves are transformers' (tests/oracle:
// random OPT folders).
#include <algorithm>
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

constexpr int64_t D = 8, F = 11, V = 13, P = 7;  // two heads of 4, 7 positions (9 rows stored)

ModelWeights read_folder(const fs::path& folder, BlockLoading loading = BlockLoading::held) {
    ModelFiles files = open_model_files(folder.string());
    files.blocks = loading;
    return read_model_weights(files);
}

// A two-block OPT folder as transformers names its tensors: biases unless `biased` is false, the
// final norm unless `final_norm` is false; config.json's `keys` after the shape's. Its stored
// positions, to compare with what is read.
Tensor write_opt(const fs::path& folder, const std::string& keys, bool biased = true, bool final_norm = true) {
    const Tensor positions = random_tensor({P + 2, D});
    std::vector<std::pair<std::string, Tensor>> tensors = {{"model.decoder.embed_tokens.weight", random_tensor({V, D})},
                                                           {"model.decoder.embed_positions.weight", positions}};
    if (final_norm)
        for (const char* part : {".weight", ".bias"})
            tensors.emplace_back(std::string("model.decoder.final_layer_norm") + part, random_tensor({D}));
    const std::vector<std::pair<std::string, std::vector<int64_t>>> matrices = {{"self_attn.q_proj", {D, D}},
                                                                                {"self_attn.k_proj", {D, D}},
                                                                                {"self_attn.v_proj", {D, D}},
                                                                                {"self_attn.out_proj", {D, D}},
                                                                                {"fc1", {F, D}},
                                                                                {"fc2", {D, F}}};
    for (int l = 0; l < 2; ++l) {
        const std::string p = fmt::format("model.decoder.layers.{}.", l);
        for (const auto& [name, shape] : matrices) {
            tensors.emplace_back(p + name + ".weight", random_tensor(shape));
            if (biased) tensors.emplace_back(p + name + ".bias", random_tensor({shape[0]}));
        }
        for (const char* norm : {"self_attn_layer_norm", "final_layer_norm"})
            for (const char* part : {".weight", ".bias"}) tensors.emplace_back(p + norm + part, random_tensor({D}));
    }
    fs::create_directories(folder);
    write_safetensors((folder / "model.safetensors").string(), tensors);
    write_text(folder / "config.json",
               fmt::format(R"({{"model_type": "opt", "hidden_size": {}, "num_attention_heads": 2,
        "num_hidden_layers": 2, "ffn_dim": {}, "vocab_size": {}, "max_position_embeddings": {}{}}})",
                           D, F, V, P, keys));
    return positions;
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("opt folders: positions offset by 2, norms before the sublayers, biases, ReLU, a tied classifier") {
    ScratchDir dir;
    const Tensor positions = write_opt(dir / "opt", R"(, "word_embed_proj_dim": 8, "layer_norm_eps": 0.1)");
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_folder(dir / "opt", loading);
        CHECK(w.config.family == "opt");
        CHECK(w.config.residual == ResidualLayout::pre_norm);
        CHECK(w.config.activation == Activation::relu);
        CHECK(w.config.norm_epsilon == 1e-5);  // nn.LayerNorm's: OPT reads no epsilon key
        CHECK(w.config.shared_classifier);
        CHECK(w.final_norm.bias.shape == std::vector<int64_t>{D});
        REQUIRE(w.position_embedding.shape == std::vector<int64_t>{P, D});
        CHECK(std::equal(w.position_embedding.data.begin(), w.position_embedding.data.end(),
                         positions.data.begin() + 2 * D));  // position 0 is row 2
        const BlockWeights b = w.blocks->load(1);
        CHECK(b.attention.rope == RopeStyle::none);
        CHECK(b.attention.score_scale == 0.0);  // 1 / sqrt(d_h)
        CHECK(b.attention.b_q.shape == std::vector<int64_t>{D});
        CHECK(b.b_out.shape == std::vector<int64_t>{D});
    }
    // OPT-350m's blocks: each norm after its residual add, and no final norm (none is read).
    write_opt(dir / "post", R"(, "do_layer_norm_before": false)", true, false);
    const ModelWeights post = read_folder(dir / "post");
    CHECK(post.config.residual == ResidualLayout::post_norm);
    CHECK(post.final_norm.weight.empty());
    write_opt(dir / "removed", R"(, "_remove_final_layer_norm": true, "enable_bias": false)", false, false);
    const ModelWeights removed = read_folder(dir / "removed");
    CHECK(removed.config.residual == ResidualLayout::pre_norm);
    CHECK(removed.final_norm.weight.empty());
    CHECK(removed.blocks->load(0).attention.b_q.empty());
}

TEST_CASE("opt folders that transformers would run otherwise are refused naming config.json or the tensor") {
    ScratchDir dir;
    write_opt(dir / "projected", R"(, "word_embed_proj_dim": 4)");
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "projected"); },
                 {"config.json", "word_embed_proj_dim 4 differs from hidden_size 8"});
    write_opt(dir / "affine", R"(, "layer_norm_elementwise_affine": false)");
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "affine"); },
                 {"config.json", "layer_norm_elementwise_affine = false"});
    write_opt(dir / "unbiased", R"(, "enable_bias": false)");
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "unbiased"); },
                 {"'model.decoder.layers.0.self_attn.q_proj.bias' is there, but config.json's enable_bias is false"});
    write_opt(dir / "biased", "", false);
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "biased"); },
                 {"'model.decoder.layers.0.self_attn.q_proj.bias' is missing, but config.json's enable_bias is true or "
                  "absent"});
    write_opt(dir / "short", R"(, "max_position_embeddings": 9)");  // 9 + 2 rows needed, 9 stored
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "short"); },
                 {"model.decoder.embed_positions.weight", "[9, 8]", "[11, 8]"});
}

}  // TEST_SUITE("models")
