// Rows of the family table (family_table.hpp) in a folder and in GGUF. StableLM: RoPE on a quarter
// of each head when config.json names no partial_rotary_factor, q/k/v biases as use_qkv_bias says
// (none on o_proj), parallel blocks from the one input_layernorm as use_parallel_residual says (GGUF:
// blocks without ffn_norm), the head size by the width; per-head q/k LayerNorms refused. OLMo:
// LayerNorms without tensors, a fixed epsilon, clip_qkv refused. The numbers themselves are
// transformers' (tests/oracle: random folders of each family and their GGUF forms). OLMo 2: RMSNorms
// after the sublayers only, q/k norms across heads, OLMo 3's GGUF window refused. Granite: its four
// multipliers from config.json and from GGUF metadata, refused by name where they are not numbers
// above 0 or where another family's config.json sets them.
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "decoder_row_files.hpp"
#include "expect_error.hpp"
#include "gguf_llama.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace row_files;
namespace fs = std::filesystem;

namespace {

// A StableLM block's norms when it is parallel: the one input_layernorm.
const std::vector<std::string> parallel_norms = {"input_layernorm"};

const std::vector<std::pair<std::string, uint32_t>> stablelm_rope = {{"rope.dimension_count", 2}};

}  // namespace

TEST_SUITE("models") {

TEST_CASE("stablelm folders: a quarter of each head turns by default, use_qkv_bias, parallel blocks from one norm") {
    ScratchDir dir;
    write_row_folder(dir / "plain", {});
    const ModelWeights plain = read_row_folder(dir / "plain");
    CHECK(plain.config.family == "stablelm");
    CHECK(plain.config.norm == NormKind::layer_norm);
    CHECK(plain.config.feed_forward == FeedForwardKind::gated);
    CHECK(plain.config.residual == ResidualLayout::pre_norm);
    CHECK(plain.config.head_dim == 8);
    CHECK_FALSE(plain.config.shared_classifier);  // tie_word_embeddings defaults to false
    const BlockWeights& b = *plain.blocks->held(1);
    CHECK(b.attention.rope == RopeStyle::half_split);
    CHECK(b.attention.rope_dims == 2);  // int(8 * 0.25)
    CHECK(b.attention.b_q.empty());
    CHECK(b.feed_forward_norm.bias.shape == std::vector<int64_t>{D});
    CHECK(b.feed_forward_norm.weight.data != b.attention_norm.weight.data);

    write_row_folder(dir / "half", {.keys = R"(, "rope_parameters": {"rope_type": "default",
        "rope_theta": 10000.0, "partial_rotary_factor": 0.5})"});
    CHECK(read_row_folder(dir / "half").blocks->held(0)->attention.rope_dims == 4);
    write_row_folder(dir / "whole", {.keys = R"(, "partial_rotary_factor": 1.0)"});
    CHECK(read_row_folder(dir / "whole").blocks->held(0)->attention.rope_dims == 0);  // every feature

    write_row_folder(dir / "parallel", {.norms = parallel_norms,
                                        .qkv_biases = true,
                                        .keys = R"(, "use_parallel_residual": true, "use_qkv_bias": true)"});
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights parallel = read_row_folder(dir / "parallel", loading);
        CHECK(parallel.config.residual == ResidualLayout::parallel);
        const BlockWeights p = parallel.blocks->load(1);
        CHECK(p.feed_forward_norm.weight.data == p.attention_norm.weight.data);
        CHECK(p.feed_forward_norm.bias.data == p.attention_norm.bias.data);
        CHECK(p.attention.b_q.shape == std::vector<int64_t>{D});
        CHECK(p.attention.b_v.shape == std::vector<int64_t>{KV});
        CHECK(p.attention.b_o.empty());
    }
}

TEST_CASE("stablelm folders that transformers would run otherwise are refused naming config.json or the tensor") {
    ScratchDir dir;
    write_row_folder(dir / "qk", {.keys = R"(, "qk_layernorm": true)"});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "qk"); },
                 {"config.json", "qk_layernorm = true is not supported"});
    write_row_folder(dir / "head_dim", {.keys = R"(, "head_dim": 4)"});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "head_dim"); },
                 {"config.json", "head_dim 4 is not hidden_size / num_attention_heads = 8"});
    write_row_folder(dir / "biases", {.qkv_biases = true});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "biases"); },
                 {"'model.layers.0.self_attn.q_proj.bias' is there, but config.json's use_qkv_bias is false or "
                  "absent"});
    write_row_folder(
        dir / "o_bias",
        {.qkv_biases = true, .keys = R"(, "use_qkv_bias": true)", .extra = {{"model.layers.0.self_attn.o_proj.bias"}}});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "o_bias"); },
                 {"'model.layers.0.self_attn.o_proj.bias' is there, but stablelm has no o_proj biases"});
    write_row_folder(dir / "no_ffn_norm", {.norms = parallel_norms});  // not parallel, yet no post_attention_layernorm
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "no_ffn_norm"); },
                 {"model.layers.0.post_attention_layernorm.weight"});
}

TEST_CASE("stablelm GGUF: rope.dimension_count, blocks without ffn_norm parallel, q/k norms refused") {
    ScratchDir dir;
    write_row_gguf(dir / "m.gguf", "stablelm", {"attn_norm", "ffn_norm"}, stablelm_rope);
    const ModelWeights m = read_gguf_llama(GgufFile(dir / "m.gguf"));
    CHECK(m.config.family == "stablelm");
    CHECK(m.config.residual == ResidualLayout::pre_norm);
    CHECK(m.config.norm_epsilon == doctest::Approx(1e-6));
    CHECK(m.blocks->held(0)->attention.rope_dims == 2);
    CHECK(m.blocks->held(0)->attention.b_q.shape == std::vector<int64_t>{D});
    write_row_gguf(dir / "parallel.gguf", "stablelm", {"attn_norm"}, stablelm_rope);
    const ModelWeights parallel = read_gguf_llama(GgufFile(dir / "parallel.gguf"));
    CHECK(parallel.config.residual == ResidualLayout::parallel);
    CHECK(parallel.blocks->held(0)->feed_forward_norm.weight.data ==
          parallel.blocks->held(0)->attention_norm.weight.data);
    write_row_gguf(dir / "qk.gguf", "stablelm", {"attn_norm", "ffn_norm"}, stablelm_rope,
                   {{"blk.0.attn_q_norm.weight"}});
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "qk.gguf")); },
                 {"qk.gguf", "blk.0.attn_q_norm.weight: q/k norms are not read for stablelm GGUF files"});
}

TEST_CASE("olmo: LayerNorms without tensors read as weight 1 and bias 0, epsilon 1e-5 whatever config.json says") {
    ScratchDir dir;
    write_row_folder(dir / "olmo",
                     {.model_type = "olmo", .norms = {}, .keys = R"(, "rms_norm_eps": 1e-2, "layer_norm_eps": 1e-2)"});
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_row_folder(dir / "olmo", loading);
        CHECK(w.config.family == "olmo");
        CHECK(w.config.norm == NormKind::layer_norm);
        CHECK(w.config.norm_epsilon == 1e-5);
        CHECK(w.final_norm.weight.data == std::vector<float, TensorAllocator<float>>(D, 1.0f));
        CHECK(w.final_norm.bias.data == std::vector<float, TensorAllocator<float>>(D, 0.0f));
        const BlockWeights b = w.blocks->load(1);
        CHECK(b.attention_norm.weight.data == w.final_norm.weight.data);
        CHECK(b.feed_forward_norm.bias.data == w.final_norm.bias.data);
        CHECK(b.attention.rope == RopeStyle::half_split);
        CHECK(b.attention.rope_dims == 0);
    }
    write_row_folder(dir / "clip", {.model_type = "olmo", .norms = {}, .keys = R"(, "clip_qkv": 8.0)"});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "clip"); },
                 {"config.json", "clip_qkv = 8.0 is not supported"});

    write_row_gguf(dir / "olmo.gguf", "olmo", {});
    const ModelWeights g = read_gguf_llama(GgufFile(dir / "olmo.gguf"));
    CHECK(g.config.norm_epsilon == doctest::Approx(1e-6));               // GGUF: the file's, as llama.cpp reads it
    CHECK(g.blocks->held(0)->attention.rope == RopeStyle::interleaved);  // the converter permutes q/k rows
    CHECK(g.blocks->held(0)->feed_forward_norm.weight.data == g.final_norm.weight.data);
    write_row_gguf(dir / "clamp.gguf", "olmo", {}, {{"attention.clamp_kqv", 8}});
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "clamp.gguf")); },
                 {"clamp.gguf", "olmo.attention.clamp_kqv = 8 is not supported"});
}

TEST_CASE("olmo2: RMSNorms after attention and feed-forward only, q/k norms over the whole projection") {
    ScratchDir dir;
    // Weights only (RMSNorms): the final norm, and each block's post-sublayer norms and q/k norms
    // (q: two heads of 8; k: the one KV head).
    std::vector<ExtraTensor> olmo2_tensors = {{"model.norm.weight"}};
    for (const char* l : {"0", "1"})
        for (const auto& [name, size] : std::vector<std::pair<std::string, int64_t>>{{"post_attention_layernorm", D},
                                                                                     {"post_feedforward_layernorm", D},
                                                                                     {"self_attn.q_norm", D},
                                                                                     {"self_attn.k_norm", KV}})
            olmo2_tensors.push_back({fmt::format("model.layers.{}.{}.weight", l, name), size});
    write_row_folder(dir / "olmo2",
                     {.model_type = "olmo2", .norms = {}, .keys = R"(, "rms_norm_eps": 1e-4)", .extra = olmo2_tensors});
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_row_folder(dir / "olmo2", loading);
        CHECK(w.config.family == "olmo2");
        CHECK(w.config.norm == NormKind::rms);
        CHECK(w.config.residual == ResidualLayout::post_sublayer);
        CHECK(w.config.norm_epsilon == 1e-4);
        const BlockWeights b = w.blocks->load(1);
        CHECK(b.attention_norm.weight.empty());
        CHECK(b.feed_forward_norm.weight.empty());
        CHECK(b.attention_output_norm.weight.shape == std::vector<int64_t>{D});
        CHECK(b.feed_forward_output_norm.weight.shape == std::vector<int64_t>{D});
        CHECK(b.attention.qk_norm_across_heads);
        CHECK(b.attention.q_norm.shape == std::vector<int64_t>{D});
        CHECK(b.attention.k_norm.shape == std::vector<int64_t>{KV});
        CHECK(b.attention.qk_norm_epsilon == 1e-4);
    }
    // A per-head q norm ([head_dim], Qwen3's) is not OLMo 2's.
    std::vector<ExtraTensor> per_head = olmo2_tensors;
    for (ExtraTensor& t : per_head)
        if (t.name.ends_with("q_norm.weight")) t.size = 8;
    write_row_folder(dir / "per_head", {.model_type = "olmo2", .norms = {}, .extra = per_head});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "per_head"); },
                 {"model.layers.0.self_attn.q_norm.weight", "[8]", "[16]"});

    const std::vector<ExtraTensor> gguf_tensors = {{"output_norm.weight"},
                                                   {"blk.0.post_attention_norm.weight"},
                                                   {"blk.0.post_ffw_norm.weight"},
                                                   {"blk.0.attn_q_norm.weight"},
                                                   {"blk.0.attn_k_norm.weight", KV}};
    write_row_gguf(dir / "olmo2.gguf", "olmo2", {}, {}, gguf_tensors);
    const ModelWeights g = read_gguf_llama(GgufFile(dir / "olmo2.gguf"));
    CHECK(g.config.residual == ResidualLayout::post_sublayer);
    CHECK(g.blocks->held(0)->attention.rope == RopeStyle::half_split);  // the converter keeps q/k rows
    CHECK(g.blocks->held(0)->attention.k_norm.shape == std::vector<int64_t>{KV});
    // Norms before the sublayers, which llama.cpp's olmo2 does not have, and OLMo 3's window.
    std::vector<ExtraTensor> with_pre_norm = gguf_tensors;
    with_pre_norm.push_back({"blk.0.attn_norm.weight"});
    write_row_gguf(dir / "pre.gguf", "olmo2", {}, {}, with_pre_norm);
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "pre.gguf")); },
                 {"pre.gguf", "blk.0.attn_norm.weight: olmo2 blocks have no norms before attention and feed-forward"});
    write_row_gguf(dir / "olmo3.gguf", "olmo2", {}, {{"attention.sliding_window", 4}}, gguf_tensors);
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "olmo3.gguf")); },
                 {"olmo3.gguf", "olmo2.attention.sliding_window = 4 is not supported"});
}

TEST_CASE("granite: embedding, attention and residual multipliers and logits_scaling, in folders and GGUF") {
    ScratchDir dir;
    std::vector<ExtraTensor> norms = {{"model.norm.weight"}};  // RMSNorms: weights only
    for (const char* l : {"0", "1"})
        for (const char* name : {"input_layernorm", "post_attention_layernorm"})
            norms.push_back({fmt::format("model.layers.{}.{}.weight", l, name)});
    const std::string granite_keys = R"(, "embedding_multiplier": 12.0, "attention_multiplier": 0.015625,
                                     "residual_multiplier": 0.22, "logits_scaling": 8.0)";
    write_row_folder(dir / "granite", {.model_type = "granite", .norms = {}, .keys = granite_keys, .extra = norms});
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed}) {
        const ModelWeights w = read_row_folder(dir / "granite", loading);
        CHECK(w.config.family == "granite");
        CHECK(w.config.embedding_scale == 12.0f);
        CHECK(w.config.residual_scale == 0.22);
        CHECK(w.config.logits_scaling == 8.0);
        const BlockWeights b = w.blocks->load(1);
        CHECK(b.attention.score_scale == 0.015625);
        CHECK(b.attention.rope == RopeStyle::half_split);
    }
    // Absent, each is 1: the scores' too, which are then not divided by sqrt(d_h).
    write_row_folder(dir / "defaults", {.model_type = "granite", .norms = {}, .extra = norms});
    const ModelWeights defaults = read_row_folder(dir / "defaults");
    CHECK(defaults.config.embedding_scale == 1.0f);
    CHECK(defaults.config.residual_scale == 1.0);
    CHECK(defaults.config.logits_scaling == 1.0);
    CHECK(defaults.blocks->held(0)->attention.score_scale == 1.0);
    write_row_folder(
        dir / "negative",
        {.model_type = "granite", .norms = {}, .keys = R"(, "residual_multiplier": -0.5)", .extra = norms});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "negative"); },
                 {"config.json", "\"residual_multiplier\" is -0.5, expected a positive number"});
    write_row_folder(dir / "llama",
                     {.model_type = "llama", .norms = {}, .keys = R"(, "logits_scaling": 8.0)", .extra = norms});
    expect_error(ErrorKind::bad_input, [&] { read_row_folder(dir / "llama"); },
                 {"config.json", "logits_scaling = 8.0 is not supported", "for llama"});

    std::vector<ExtraTensor> gguf_norms = {
        {"output_norm.weight"}, {"blk.0.attn_norm.weight"}, {"blk.0.ffn_norm.weight"}};
    const auto multipliers = [](std::vector<std::pair<std::string, float>> values, bool rope = true) {
        return [values, rope](GgufBuilder& g) {
            for (const auto& [key, value] : values) g.add_f32("granite." + key, value);
            if (!rope) g.add_bool("granite.rope.scaling.finetuned", false);
        };
    };
    write_row_gguf(dir / "granite.gguf", "granite", {}, {}, gguf_norms,
                   multipliers({{"embedding_scale", 12.0f},
                                {"attention.scale", 0.015625f},
                                {"residual_scale", 0.25f},
                                {"logit_scale", 8.0f}}));
    const ModelWeights g = read_gguf_llama(GgufFile(dir / "granite.gguf"));
    CHECK(g.config.family == "granite");
    CHECK(g.config.embedding_scale == 12.0f);
    CHECK(g.config.residual_scale == 0.25);
    CHECK(g.config.logits_scaling == 8.0);
    CHECK(g.blocks->held(0)->attention.score_scale == 0.015625);
    CHECK(g.blocks->held(0)->attention.rope == RopeStyle::interleaved);  // the converter permutes q/k rows
    // llama.cpp: 1 / sqrt(d_h) without attention.scale, 1 without the embedding and residual scales.
    write_row_gguf(dir / "plain.gguf", "granite", {}, {}, gguf_norms, multipliers({{"logit_scale", 8.0f}}));
    const ModelWeights plain = read_gguf_llama(GgufFile(dir / "plain.gguf"));
    CHECK(plain.blocks->held(0)->attention.score_scale == 0.0);
    CHECK(plain.config.residual_scale == 1.0);
    CHECK(plain.config.embedding_scale == 1.0f);
    write_row_gguf(dir / "no_logit_scale.gguf", "granite", {}, {}, gguf_norms, multipliers({}));
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "no_logit_scale.gguf")); },
                 {"no_logit_scale.gguf", "has no granite.logit_scale"});
    write_row_gguf(dir / "zero.gguf", "granite", {}, {}, gguf_norms,
                   multipliers({{"logit_scale", 8.0f}, {"residual_scale", 0.0f}}));
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "zero.gguf")); },
                 {"zero.gguf", "granite.residual_scale = 0 is not supported"});
    write_row_gguf(dir / "nope.gguf", "granite", {}, {}, gguf_norms, multipliers({{"logit_scale", 8.0f}}, false));
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "nope.gguf")); },
                 {"nope.gguf", "granite.rope.scaling.finetuned = false (no RoPE) is not supported"});
}

}  // TEST_SUITE("models")
