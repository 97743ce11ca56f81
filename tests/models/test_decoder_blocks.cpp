// decoder_blocks.hpp's block sources over a Hugging Face folder: the blocks streamed from the
// mapped safetensors (StreamedDecoderBlocks) equal the blocks read whole (HeldBlocks), on a small
// random decoder (one file and two shards) and on stories260K's folder; a streamed source holds
// no block; a truncated shard is refused naming it. GGUF decoders' feed-forward biases are read.
// StarCoder 2's row (LayerNorms with biases, a plain MLP, use_bias) in a folder and in GGUF;
// SmolLM3's layers without RoPE.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf_builder.hpp"
#include "gguf_llama.hpp"
#include "hf_folder_fixture.hpp"
#include "model_files.hpp"
#include "support.hpp"
#include "weights_fingerprint.hpp"

using namespace attn_viz;
using namespace test_support;
namespace fs = std::filesystem;

namespace {

ModelWeights read_folder(const std::string& folder, BlockLoading loading) {
    ModelFiles files = open_model_files(folder);
    files.blocks = loading;
    return read_model_weights(files);
}

// Every tensor of two blocks, bit for bit.
void check_same_block(const BlockWeights& a, const BlockWeights& b) {
    for (const auto& [x, y] : {std::pair{&a.attention.w_q, &b.attention.w_q},
                               {&a.attention.w_k, &b.attention.w_k},
                               {&a.attention.w_v, &b.attention.w_v},
                               {&a.attention.w_o, &b.attention.w_o},
                               {&a.attention.b_q, &b.attention.b_q},
                               {&a.attention.b_o, &b.attention.b_o},
                               {&a.attention_norm.weight, &b.attention_norm.weight},
                               {&a.attention_norm.bias, &b.attention_norm.bias},
                               {&a.feed_forward_norm.weight, &b.feed_forward_norm.weight},
                               {&a.feed_forward_norm.bias, &b.feed_forward_norm.bias},
                               {&a.w_in, &b.w_in},
                               {&a.w_up, &b.w_up},
                               {&a.w_out, &b.w_out},
                               {&a.b_in, &b.b_in},
                               {&a.b_out, &b.b_out}}) {
        CHECK(x->shape == y->shape);
        CHECK(x->data == y->data);
    }
    CHECK(a.attention.rope == b.attention.rope);
    CHECK(a.attention.num_kv_heads == b.attention.num_kv_heads);
}

// `folder` read whole and streamed: the same blocks and outside tensors, the same fingerprint;
// the streamed source holds no block, the held one every block.
void check_streamed_as_held(const std::string& folder) {
    const ModelWeights held = read_folder(folder, BlockLoading::held);
    const ModelWeights streamed = read_folder(folder, BlockLoading::streamed);
    CHECK_FALSE(held.blocks->streams());
    CHECK(streamed.blocks->streams());
    REQUIRE(streamed.blocks->n_layers() == held.config.n_layers);
    REQUIRE(held.blocks->n_layers() == held.config.n_layers);
    CHECK(streamed.token_embedding.data == held.token_embedding.data);
    CHECK(streamed.classifier_matrix().data == held.classifier_matrix().data);
    BlockWeights refilled;
    for (int64_t l = held.config.n_layers - 1; l >= 0; --l) {  // out of order, into one BlockWeights
        CAPTURE(l);
        CHECK(streamed.blocks->held(l) == nullptr);
        REQUIRE(held.blocks->held(l) != nullptr);
        check_same_block(streamed.blocks->load(l), *held.blocks->held(l));
        streamed.blocks->load_into(l, refilled);
        check_same_block(refilled, *held.blocks->held(l));
    }
    CHECK(model_fingerprint(streamed) == model_fingerprint(held));
}

}  // namespace

TEST_SUITE("models") {

TEST_CASE("a folder's decoder blocks streamed from its mapped safetensors are the blocks read whole") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());
    for (const fs::path& folder : {folders.single, folders.sharded}) {
        CAPTURE(folder);
        check_streamed_as_held(folder.string());
    }
    const std::string hf = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    if (hf.empty()) return;
    check_streamed_as_held(hf);
}

TEST_CASE("a truncated shard of a streamed folder is refused naming the file, before any block is read") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());
    const fs::path shard = folders.sharded / "model-00002-of-00002.safetensors";
    fs::resize_file(shard, fs::file_size(shard) - 7);
    for (BlockLoading loading : {BlockLoading::streamed, BlockLoading::held}) {
        CAPTURE(static_cast<int>(loading));
        expect_error(ErrorKind::bad_input, [&] { read_folder(folders.sharded.string(), loading); },
                     {shard.string(), "past the data buffer", "file truncated?"});
    }
}

TEST_CASE("GGUF llama: feed-forward biases are read where the file holds them, streamed or whole") {
    ScratchDir dir;
    constexpr int64_t D = 8, F = 12, V = 20;
    GgufBuilder b;
    b.add_string("general.architecture", "llama");
    for (const auto& [key, value] : {std::pair<const char*, uint32_t>{"llama.block_count", 2},
                                     {"llama.embedding_length", D},
                                     {"llama.feed_forward_length", F},
                                     {"llama.attention.head_count", 2},
                                     {"llama.attention.head_count_kv", 2},
                                     {"llama.context_length", 16},
                                     {"llama.rope.dimension_count", 4}})
        b.add_u32(key, value);
    b.add_f32("llama.rope.freq_base", 10000.0f);
    b.add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
    std::map<std::string, Tensor> written;
    const auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
        const Tensor t = random_tensor(shape);
        b.add_f32_tensor(name, {shape.rbegin(), shape.rend()}, t.data);
        written.emplace(name, t);
    };
    tensor("token_embd.weight", {V, D});
    for (int l = 0; l < 2; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        for (const char* name : {"attn_q", "attn_k", "attn_v", "attn_output"}) tensor(p + name + ".weight", {D, D});
        tensor(p + "attn_norm.weight", {D}), tensor(p + "ffn_norm.weight", {D});
        tensor(p + "ffn_gate.weight", {F, D}), tensor(p + "ffn_up.weight", {F, D});
        tensor(p + "ffn_down.weight", {D, F});
    }
    // Block 0 has all three biases, block 1 only the down projection's.
    tensor("blk.0.ffn_gate.bias", {F}), tensor("blk.0.ffn_up.bias", {F}), tensor("blk.0.ffn_down.bias", {D});
    tensor("blk.1.ffn_down.bias", {D});
    tensor("output_norm.weight", {D}), tensor("output.weight", {V, D});
    write_text(dir / "m.gguf", b.bytes());

    const ModelWeights whole = read_gguf_llama(GgufFile(dir / "m.gguf"));
    const BlockWeights& b0 = *whole.blocks->held(0);
    const BlockWeights& b1 = *whole.blocks->held(1);
    CHECK(b0.b_in.data == written.at("blk.0.ffn_gate.bias").data);
    CHECK(b0.b_up.data == written.at("blk.0.ffn_up.bias").data);
    CHECK(b0.b_out.data == written.at("blk.0.ffn_down.bias").data);
    CHECK(b1.b_in.empty());
    CHECK(b1.b_up.empty());
    CHECK(b1.b_out.data == written.at("blk.1.ffn_down.bias").data);
    // Refilling block 0's memory with block 1 leaves no bias of block 0 behind.
    const ModelWeights streamed = read_gguf_llama_streaming(std::make_shared<const GgufFile>(dir / "m.gguf"));
    BlockWeights refilled;
    streamed.blocks->load_into(0, refilled);
    CHECK(refilled.b_up.data == b0.b_up.data);
    streamed.blocks->load_into(1, refilled);
    CHECK(refilled.b_in.empty());
    CHECK(refilled.b_up.empty());
    CHECK(refilled.b_out.data == b1.b_out.data);
    CHECK(model_fingerprint(streamed) == model_fingerprint(whole));
}

TEST_CASE(
    "starcoder2: LayerNorm biases, the plain MLP and use_bias read from a folder, streamed as held, and refused "
    "where the folder or GGUF file disagrees") {
    constexpr int64_t D = 8, KV = 4, F = 12, V = 20;
    // A two-block folder; `omit` leaves a tensor out, `use_bias` is written unless empty.
    const auto write_folder = [&](const fs::path& folder, const std::string& use_bias, const std::string& omit) {
        std::vector<std::pair<std::string, Tensor>> tensors = {{"model.embed_tokens.weight", random_tensor({V, D})},
                                                               {"model.norm.weight", random_tensor({D})},
                                                               {"model.norm.bias", random_tensor({D})}};
        const std::vector<std::pair<std::string, std::vector<int64_t>>> block = {
            {"self_attn.q_proj", {D, D}}, {"self_attn.k_proj", {KV, D}}, {"self_attn.v_proj", {KV, D}},
            {"self_attn.o_proj", {D, D}}, {"mlp.c_fc", {F, D}},          {"mlp.c_proj", {D, F}}};
        for (int l = 0; l < 2; ++l) {
            const std::string p = "model.layers." + std::to_string(l) + ".";
            for (const auto& [name, shape] : block) {
                tensors.emplace_back(p + name + ".weight", random_tensor(shape));
                tensors.emplace_back(p + name + ".bias", random_tensor({shape[0]}));
            }
            for (const char* norm : {"input_layernorm", "post_attention_layernorm"})
                for (const char* part : {".weight", ".bias"}) tensors.emplace_back(p + norm + part, random_tensor({D}));
        }
        std::erase_if(tensors, [&](const auto& t) { return t.first == omit; });
        fs::create_directories(folder);
        write_safetensors((folder / "model.safetensors").string(), tensors);
        write_text(folder / "config.json",
                   R"({"model_type": "starcoder2", "hidden_size": 8, "num_attention_heads": 2,
                       "num_key_value_heads": 1, "num_hidden_layers": 2, "intermediate_size": 12,
                       "vocab_size": 20, "max_position_embeddings": 16, "norm_epsilon": 1e-5)" +
                       (use_bias.empty() ? std::string() : ", \"use_bias\": " + use_bias) + "}");
    };
    ScratchDir dir;
    write_folder(dir / "ok", "", "");
    const ModelWeights w = read_folder(dir / "ok", BlockLoading::held);
    CHECK(w.config.family == "starcoder2");
    CHECK(w.config.norm == NormKind::layer_norm);
    CHECK(w.config.feed_forward == FeedForwardKind::plain);
    CHECK(w.config.shared_classifier);  // tie_word_embeddings defaults to true
    CHECK(w.final_norm.bias.shape == std::vector<int64_t>{D});
    const BlockWeights& b = *w.blocks->held(1);
    CHECK(b.attention_norm.bias.shape == std::vector<int64_t>{D});
    CHECK(b.feed_forward_norm.bias.shape == std::vector<int64_t>{D});
    CHECK(b.w_in.shape == std::vector<int64_t>{F, D});
    CHECK(b.w_up.empty());
    CHECK(b.b_in.shape == std::vector<int64_t>{F});
    CHECK(b.b_out.shape == std::vector<int64_t>{D});
    CHECK(b.attention.b_k.shape == std::vector<int64_t>{KV});
    CHECK(b.attention.b_o.shape == std::vector<int64_t>{D});
    check_streamed_as_held(dir / "ok");

    write_folder(dir / "no_bias", "false", "");
    expect_error(ErrorKind::bad_input, [&] { read_folder(dir / "no_bias", BlockLoading::held); },
                 {"'model.layers.0.self_attn.q_proj.bias' is there, but config.json's use_bias is false"});
    write_folder(dir / "missing", "true", "model.layers.1.mlp.c_fc.bias");
    for (BlockLoading loading : {BlockLoading::held, BlockLoading::streamed})
        expect_error(ErrorKind::bad_input,
                     [&] {
                         const ModelWeights m = read_folder(dir / "missing", loading);
                         m.blocks->load(1);
                     },
                     {"'model.layers.1.mlp.c_fc.bias' is missing, but config.json's use_bias is true or absent"});

    // GGUF: the LayerNorm epsilon key, the biases it holds; a window is refused (llama.cpp applies none).
    const auto write_gguf = [&](const fs::path& path, bool window) {
        GgufBuilder g;
        g.add_string("general.architecture", "starcoder2");
        for (const auto& [key, value] : {std::pair<const char*, uint32_t>{"starcoder2.block_count", 1},
                                         {"starcoder2.embedding_length", D},
                                         {"starcoder2.feed_forward_length", F},
                                         {"starcoder2.attention.head_count", 2},
                                         {"starcoder2.attention.head_count_kv", 1},
                                         {"starcoder2.context_length", 16}})
            g.add_u32(key, value);
        g.add_f32("starcoder2.attention.layer_norm_epsilon", 1e-6f);
        if (window) g.add_u32("starcoder2.attention.sliding_window", 4);
        const auto tensor = [&](const std::string& name, std::vector<int64_t> shape) {
            g.add_f32_tensor(name, {shape.rbegin(), shape.rend()}, random_tensor(shape).data);
        };
        tensor("token_embd.weight", {V, D});
        tensor("output_norm.weight", {D}), tensor("output_norm.bias", {D});
        for (const char* norm : {"attn_norm", "ffn_norm"})
            tensor(std::string("blk.0.") + norm + ".weight", {D}), tensor(std::string("blk.0.") + norm + ".bias", {D});
        tensor("blk.0.attn_q.weight", {D, D}), tensor("blk.0.attn_k.weight", {KV, D});
        tensor("blk.0.attn_v.weight", {KV, D}), tensor("blk.0.attn_output.weight", {D, D});
        tensor("blk.0.attn_q.bias", {D});
        tensor("blk.0.ffn_up.weight", {F, D}), tensor("blk.0.ffn_up.bias", {F});
        tensor("blk.0.ffn_down.weight", {D, F});
        write_text(path, g.bytes());
    };
    write_gguf(dir / "m.gguf", false);
    const ModelWeights g = read_gguf_llama(GgufFile(dir / "m.gguf"));
    CHECK(g.config.norm == NormKind::layer_norm);
    CHECK(g.config.feed_forward == FeedForwardKind::plain);
    CHECK(g.config.norm_epsilon == doctest::Approx(1e-6));
    CHECK(g.blocks->held(0)->attention.sliding_window == 0);
    CHECK(g.blocks->held(0)->attention.b_q.shape == std::vector<int64_t>{D});
    CHECK(g.blocks->held(0)->attention.b_k.empty());
    CHECK(g.blocks->held(0)->b_in.shape == std::vector<int64_t>{F});
    CHECK(g.blocks->held(0)->b_out.empty());
    write_gguf(dir / "window.gguf", true);
    expect_error(ErrorKind::bad_input, [&] { read_gguf_llama(GgufFile(dir / "window.gguf")); },
                 {"window.gguf", "starcoder2.attention.sliding_window = 4 is not supported"});
}

TEST_CASE(
    "smollm3: the layers no_rope_layers marks 0 (or every no_rope_layer_interval-th) turn nothing, and slide "
    "with use_sliding_window; bad lists are refused naming config.json") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());  // two layers
    const fs::path config = folders.single / "config.json";
    const auto read_with = [&](const std::string& keys) {
        write_text(config.string(),
                   R"({"model_type": "smollm3", "hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 16,
                       "max_position_embeddings": 32, "tie_word_embeddings": false)" +
                       keys + "}");
        return read_folder(folders.single.string(), BlockLoading::held);
    };
    const auto ropes = [](const ModelWeights& w) {
        return std::vector<RopeStyle>{w.blocks->held(0)->attention.rope, w.blocks->held(1)->attention.rope};
    };
    const auto windows = [](const ModelWeights& w) {
        return std::vector<int64_t>{w.blocks->held(0)->attention.sliding_window,
                                    w.blocks->held(1)->attention.sliding_window};
    };
    using R = RopeStyle;
    CHECK(ropes(read_with("")) == std::vector<R>{R::half_split, R::half_split});  // every 4th layer: none of two
    CHECK(ropes(read_with(R"(, "no_rope_layer_interval": 2)")) == std::vector<R>{R::half_split, R::none});
    const ModelWeights listed =
        read_with(R"(, "no_rope_layers": [0, 1], "use_sliding_window": true, "sliding_window": 5)");
    CHECK(ropes(listed) == std::vector<R>{R::none, R::half_split});
    CHECK(windows(listed) == std::vector<int64_t>{5, 0});  // the layer without RoPE slides
    CHECK(windows(read_with(R"(, "no_rope_layers": [0, 1], "sliding_window": 5)")) == std::vector<int64_t>{0, 0});
    CHECK(windows(read_with(R"(, "use_sliding_window": true, "sliding_window": 5,
                                 "layer_types": ["full_attention", "sliding_attention"])")) ==
          std::vector<int64_t>{0, 5});
    expect_error(ErrorKind::bad_input, [&] { read_with(R"(, "no_rope_layers": [1, 1, 0])"); },
                 {"config.json", "no_rope_layers lists 3 layers, num_hidden_layers is 2"});
    expect_error(ErrorKind::bad_input, [&] { read_with(R"(, "no_rope_layers": [1, 2])"); },
                 {"config.json", "no_rope_layers holds 2 (1: the layer uses RoPE, 0: it does not)"});
    expect_error(ErrorKind::bad_input, [&] { read_with(R"(, "no_rope_layers": "all")"); },
                 {"config.json", "\"no_rope_layers\" is \"all\", expected a list"});
}

}  // TEST_SUITE("models")
