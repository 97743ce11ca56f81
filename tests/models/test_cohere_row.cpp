// Cohere (Command R), a row of the family table in a folder and in GGUF (command-r): parallel
// blocks from the one input_layernorm, LayerNorms with a weight and no bias, RoPE on interleaved
// pairs, logits times logit_scale. The numbers themselves are transformers' (tests/oracle: random
// cohere folders and their GGUF forms).
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "decoder_row_files.hpp"
#include "expect_error.hpp"
#include "gguf_llama.hpp"

using namespace attn_viz;
using namespace row_files;

namespace {

// Cohere's LayerNorms in a folder: weights only, input_layernorm alone in each block.
std::vector<ExtraTensor> cohere_norms() {
    std::vector<ExtraTensor> norms = {{"model.norm.weight"}};
    for (int l = 0; l < 2; ++l) norms.push_back({fmt::format("model.layers.{}.input_layernorm.weight", l)});
    return norms;
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("cohere folders: parallel blocks, LayerNorms without biases, interleaved RoPE, logit_scale") {
    ScratchDir dir;
    write_row_folder(dir / "cohere", {.model_type = "cohere",
                                      .norms = {},
                                      .qkv_biases = false,
                                      .keys = R"(, "logit_scale": 0.25, "layer_norm_eps": 1e-4)",
                                      .extra = cohere_norms()});
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_row_folder(dir / "cohere", loading);
        CHECK(w.config.family == "cohere");
        CHECK(w.config.norm == NormKind::layer_norm);
        CHECK(w.config.residual == ResidualLayout::parallel);
        CHECK(w.config.norm_epsilon == 1e-4);
        CHECK(w.config.logits_scaling == 4.0);  // logits * 0.25
        CHECK(w.config.shared_classifier);      // tie_word_embeddings: true by default
        CHECK(w.final_norm.bias.empty());
        const BlockWeights b = w.blocks->load(1);
        CHECK(b.attention_norm.bias.empty());
        CHECK(b.feed_forward_norm.weight.data == b.attention_norm.weight.data);
        CHECK(b.attention.rope == RopeStyle::interleaved);
        CHECK(b.attention.b_q.empty());
    }
    write_row_folder(dir / "default", {.model_type = "cohere", .norms = {}, .extra = cohere_norms()});
    CHECK(read_row_folder(dir / "default").config.logits_scaling == 16.0);  // 0.0625 when absent
    const auto refused = [&](const std::string& name, const std::string& keys, const std::string& message) {
        write_row_folder(dir / name, {.model_type = "cohere", .norms = {}, .keys = keys, .extra = cohere_norms()});
        expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / name); }, {"config.json", message});
    };
    refused("null", R"(, "logit_scale": null)", "logit_scale is null");
    refused("negative", R"(, "logit_scale": -1)", "\"logit_scale\" is -1, expected a positive number");
    refused("qk", R"(, "use_qk_norm": true)", "use_qk_norm = true is not supported");
    // q/k/v biases need attention_bias, as transformers builds them.
    write_row_folder(dir / "biased",
                     {.model_type = "cohere", .norms = {}, .qkv_biases = true, .extra = cohere_norms()});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "biased"); },
                 {"'model.layers.0.self_attn.q_proj.bias' is there, but config.json's attention_bias is false"});
}

TEST_CASE("cohere GGUF (command-r): logit_scale required, LayerNorm biases and ffn_norm refused") {
    ScratchDir dir;
    const std::vector<ExtraTensor> norms = {{"output_norm.weight"}, {"blk.0.attn_norm.weight"}};
    const auto logit_scale = [](float scale) {
        return [scale](GgufBuilder& g) { g.add_f32("command-r.logit_scale", scale); };
    };
    write_row_gguf(dir / "c.gguf", "command-r", {}, {}, norms, logit_scale(0.5f));
    const ModelWeights g = read_gguf_llama(GgufFile(dir / "c.gguf"));
    CHECK(g.config.family == "cohere");
    CHECK(g.config.residual == ResidualLayout::parallel);
    CHECK(g.config.logits_scaling == 2.0);
    CHECK(g.config.norm_epsilon == doctest::Approx(1e-6));  // attention.layer_norm_epsilon
    CHECK(g.blocks->held(0)->attention.rope == RopeStyle::interleaved);
    CHECK(g.blocks->held(0)->attention_norm.bias.empty());
    CHECK(g.blocks->held(0)->attention.b_q.shape == std::vector<int64_t>{D});  // llama.cpp reads those it finds
    write_row_gguf(dir / "none.gguf", "command-r", {}, {}, norms);
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "none.gguf")); },
                 {"none.gguf", "has no command-r.logit_scale (llama.cpp requires it)"});
    std::vector<ExtraTensor> biased = norms;
    biased.push_back({"blk.0.attn_norm.bias"});
    write_row_gguf(dir / "bias.gguf", "command-r", {}, {}, biased, logit_scale(0.5f));
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "bias.gguf")); },
                 {"bias.gguf", "blk.0.attn_norm.bias: cohere LayerNorms have no bias, so none is read"});
    std::vector<ExtraTensor> sequential = norms;
    sequential.push_back({"blk.0.ffn_norm.weight"});
    write_row_gguf(dir / "ffn.gguf", "command-r", {}, {}, sequential, logit_scale(0.5f));
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "ffn.gguf")); },
                 {"ffn.gguf", "blk.0.ffn_norm.weight: block 0 has no ffn_norm (parallel blocks)"});
}

}  // TEST_SUITE("models")
