// stories260K as llama.cpp's GGUF (../shared/models/stories260K-gguf): the F32 file is the same
// model as stories260K.bin (weights, tokenizer, attention, the greedy story), and its Q8_0 copy
// runs with attention close to, but not equal to, the F32 model's.
#include <filesystem>

#include <doctest/doctest.h>

#include "expect_error.hpp"
#include "gguf.hpp"
#include "gguf_builder.hpp"
#include "gguf_llama.hpp"
#include "gguf_tokenizer.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "model_files.hpp"
#include "onednn_backend.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

const std::string story =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.";

// ../shared/models/stories260K-gguf beside stories260K, or "" (the test then returns).
std::string gguf_dir(const std::string& stories_dir) {
    if (stories_dir.empty()) return "";
    const std::string dir = stories_dir + "-gguf";
    if (std::filesystem::exists(dir + "/stories260K.gguf") && std::filesystem::exists(dir + "/stories260K-Q8_0.gguf"))
        return dir;
    MESSAGE("skipped: " << dir << " is absent");
    return "";
}

// A llama GGUF file's metadata (D 8, 2 heads, F 12, one block, context 16) and its token
// embeddings [10, 8], with `add_extra` adding keys, written to dir/model.gguf.
template <typename AddExtra>
std::string llama_metadata_file(const ScratchDir& dir, AddExtra add_extra) {
    GgufBuilder b;
    b.add_string("general.architecture", "llama");
    b.add_u32("llama.block_count", 1);
    b.add_u32("llama.embedding_length", 8);
    b.add_u32("llama.feed_forward_length", 12);
    b.add_u32("llama.attention.head_count", 2);
    b.add_u32("llama.context_length", 16);
    add_extra(b);
    const Tensor embedding = random_tensor({10, 8});
    b.add_f32_tensor("token_embd.weight", {8, 10},
                     std::span<const float>(embedding.data.data(), embedding.data.size()));
    const std::string path = dir / "model.gguf";
    write_text(path, b.bytes());
    return path;
}

double max_attention_difference(const ModelRun& a, const ModelRun& b) {
    double worst = 0;
    for (size_t l = 0; l < a.layers.size(); ++l)
        worst = std::max(worst, max_abs_diff(a.layers[l].attention, b.layers[l].attention));
    return worst;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("GGUF llama metadata that attn-viz does not implement is refused naming the key and its value") {
    ScratchDir dir;
    CHECK(gguf_llama_config(GgufFile(llama_metadata_file(dir, [](GgufBuilder&) {}))).d_model == 8);
    // The head size itself and zero experts are what attn-viz runs.
    CHECK(gguf_llama_config(GgufFile(llama_metadata_file(dir, [](GgufBuilder& b) {
              b.add_u32("llama.attention.key_length", 4);
              b.add_u32("llama.expert_count", 0);
          }))).n_heads == 2);
    const std::pair<std::string, std::string> refused[] = {
        {"llama.attention.sliding_window", "llama.attention.sliding_window = 4096 is not supported"},
        {"llama.expert_count", "llama.expert_count = 4096 is not supported"},
        {"llama.attention.key_length", "llama.attention.key_length = 4096 is not supported (only the head size 4)"},
        {"llama.attention.value_length", "llama.attention.value_length = 4096 is not supported"},
        {"llama.attn_logit_softcapping", "llama.attn_logit_softcapping = 4096 is not supported"},
        {"llama.final_logit_softcapping", "llama.final_logit_softcapping = 4096 is not supported"},
    };
    for (const auto& [key, message] : refused) {
        CAPTURE(key);
        const std::string path = llama_metadata_file(dir, [&](GgufBuilder& b) { b.add_u32(key, 4096); });
        expect_error(ErrorKind::bad_input, [&] { gguf_llama_config(GgufFile(path)); }, {path, message});
    }
}

TEST_CASE("stories260K.gguf: the same weights, tokenizer, attention and story as stories260K.bin") {
    const std::string bin_dir = stories260k_dir(), dir = gguf_dir(bin_dir);
    if (dir.empty()) return;
    const GgufFile file(dir + "/stories260K.gguf");
    const ModelWeights from_gguf = read_gguf_llama(file),
                       from_bin = read_llama2c_checkpoint(bin_dir + "/stories260K.bin");
    const ModelConfig& c = from_gguf.config;
    CHECK(c.d_model == 64);
    CHECK(c.ffn_dim == 172);
    CHECK(c.n_layers == 5);
    CHECK(c.n_heads == 8);
    CHECK(c.n_kv_heads == 4);
    CHECK(c.vocab_size == 512);
    CHECK(c.max_tokens == 2048);
    CHECK(c.norm_epsilon == doctest::Approx(1e-5));
    CHECK(c.rope_base == 10000.0);
    CHECK(!c.shared_classifier);  // output.weight is a separate copy of token_embd
    CHECK(from_gguf.token_embedding.data == from_bin.token_embedding.data);
    CHECK(from_gguf.classifier_matrix().data == from_bin.classifier_matrix().data);
    CHECK(from_gguf.final_norm.weight.data == from_bin.final_norm.weight.data);
    for (size_t l = 0; l < 5; ++l) {
        CAPTURE(l);
        const BlockWeights &g = *from_gguf.blocks->held(l), &b = *from_bin.blocks->held(l);
        CHECK(g.attention.w_q.data == b.attention.w_q.data);
        CHECK(g.attention.w_k.data == b.attention.w_k.data);
        CHECK(g.attention.w_v.data == b.attention.w_v.data);
        CHECK(g.attention.w_o.data == b.attention.w_o.data);
        CHECK(g.w_in.data == b.w_in.data);
        CHECK(g.w_out.data == b.w_out.data);
        CHECK(g.w_up.data == b.w_up.data);
        CHECK(g.attention_norm.weight.data == b.attention_norm.weight.data);
        CHECK(g.feed_forward_norm.weight.data == b.feed_forward_norm.weight.data);
    }

    const Llama2cTokenizer tokenizer = read_gguf_llama_tokenizer(file, c.vocab_size);
    const Llama2cTokenizer reference_tokenizer(bin_dir + "/tok512.bin", 512);
    const std::vector<int> ids = tokenizer.encode(story, true, false);
    CHECK(ids == reference_tokenizer.encode(story, true, false));
    CHECK(tokenizer.decode(ids) == story);

    OnednnBackend backend;
    WholeModel gguf_model(backend, read_gguf_llama(file));
    WholeModel bin_model(backend, read_llama2c_checkpoint(bin_dir + "/stories260K.bin"));
    const ModelRun bin_run = bin_model.run(ids);
    CHECK(max_attention_difference(gguf_model.run(ids), bin_run) < 1e-5);

    // Streamed by layer: the same run, and the attention weights kept for the report.
    WholeModel streamed(backend, read_model_weights(open_model_files(dir + "/stories260K.gguf")));
    CHECK(streamed.weights().blocks->streams());
    REQUIRE(streamed.attention_weights().size() == 5);
    CHECK(max_attention_difference(streamed.run(ids), bin_run) < 1e-5);
    CHECK(streamed.attention_weights()[3]->w_k.data == from_bin.blocks->held(3)->attention.w_k.data);
    CHECK(max_attention_difference(streamed.run(ids), bin_run) < 1e-5);  // a second run loads the blocks again
    CHECK(streamed.attention_weights().size() == 5);
    const std::string text = tokenizer.decode(greedy_generate(gguf_model, {Llama2cTokenizer::bos_id}, 40));
    CHECK_MESSAGE(text.rfind(story, 0) == 0, "generated: " << text);
}

TEST_CASE("stories260K-Q8_0.gguf runs, its attention near the F32 model's but not equal") {
    const std::string dir = gguf_dir(stories260k_dir());
    if (dir.empty()) return;
    const GgufFile f32(dir + "/stories260K.gguf"), q8(dir + "/stories260K-Q8_0.gguf");
    CHECK(q8.find_tensor("blk.0.attn_q.weight")->type == 8);
    CHECK(q8.find_tensor("blk.0.ffn_down.weight")->type == 0);  // rows of 172 are not whole Q8_0 blocks
    OnednnBackend backend;
    WholeModel full(backend, read_gguf_llama(f32)), quantized(backend, read_gguf_llama(q8));
    const Llama2cTokenizer tokenizer = read_gguf_llama_tokenizer(q8, 512);
    const std::vector<int> ids = tokenizer.encode(story, true, false);
    const double difference = max_attention_difference(full.run(ids), quantized.run(ids));
    MESSAGE("stories260K F32 vs Q8_0: largest attention difference " << difference);
    CHECK(difference > 0);
    CHECK(difference < 0.05);
    const std::string text = tokenizer.decode(greedy_generate(quantized, {Llama2cTokenizer::bos_id}, 20));
    CHECK_MESSAGE(text.rfind("Once upon a time", 0) == 0, "generated: " << text);
}

}  // TEST_SUITE("model")
