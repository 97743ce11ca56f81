// A model run block by block (WholeModel::run_blocks, what `model --stream-layers` uses) on small
// random Llama models: each block's result equals run()'s, nothing is kept in the run, and a
// streamed model loads each block once per pass and none up front; a streamed GGUF model of
// quantized blocks, refilling one block's memory, runs as the model read whole; a Hugging Face
// folder streamed from its mapped safetensors runs as the folder read whole, one block at a time.
#include <algorithm>
#include <memory>

#include <doctest/doctest.h>

#include "block_sources.hpp"
#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "hf_folder_fixture.hpp"
#include "model_files.hpp"
#include "quantized_llama_gguf.hpp"
#include "random_llama.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("model") {

TEST_CASE("run_blocks hands each block's result to the visitor, equal to run's, and keeps none") {
    for_each_test_model([&](const ModelShape& s, WholeModel& model, OnednnBackend&) {
        const ModelWeights& weights = model.weights();
        for (int T : {1, 7, 16}) {
            const std::vector<int> tokens = random_ids(T, s.vocab);
            const ModelRun whole = model.run(tokens, {.value_norms = true});
            size_t visits = 0;
            const ModelRun streamed = model.run_blocks(
                tokens, {.value_norms = true},
                [&](size_t l, LayerResult& result, Tensor& residual, const LayerWeights& w) {
                    CHECK(l == visits++);
                    const LayerResult& expected = whole.layers[l];
                    CHECK(result.attention.data == expected.attention.data);
                    CHECK(result.output.data == expected.output.data);
                    CHECK(result.contribution_norms.data == expected.contribution_norms.data);
                    CHECK(result.value_norms.data == expected.value_norms.data);
                    CHECK(residual.data == whole.residual[l].data);
                    CHECK(w.w_q.data == weights.blocks->held(static_cast<int64_t>(l))->attention.w_q.data);
                });
            CHECK(visits == static_cast<size_t>(s.layers));
            CHECK(streamed.layers.empty());
            CHECK(streamed.residual.empty());
            CHECK(streamed.logits.data == whole.logits.data);
            CHECK(streamed.hidden_states.data == whole.hidden_states.data);
            // Without logits: the same run up to the final norm, and no product by the vocabulary.
            const ModelRun without = model.run(tokens, {.value_norms = true, .logits = false});
            CHECK(without.logits.empty());
            CHECK(!whole.logits.empty());
            CHECK(without.hidden_states.data == whole.hidden_states.data);
            CHECK(without.layers.back().attention.data == whole.layers.back().attention.data);
        }
    });
}

TEST_CASE("a streamed model loads no block up front and each block once per pass") {
    OnednnBackend backend;
    const ModelShape s = test_model_shapes[2];
    const ModelWeights whole = random_model(s, 16);
    const std::vector<int> tokens = random_ids(9, s.vocab);
    const ModelRun expected = WholeModel(backend, whole).run(tokens);
    std::vector<int> loads;
    {
        // Keeping attention weights (the default): the pass's loads serve attention_weights() too.
        WholeModel model(backend, counted_copy(whole, loads));
        CHECK(loads == std::vector<int>(3, 0));
        const ModelRun run = model.run(tokens);
        CHECK(loads == std::vector<int>(3, 1));
        CHECK(run.logits.data == expected.logits.data);
        const std::vector<const LayerWeights*> attention = model.attention_weights();
        CHECK(loads == std::vector<int>(3, 1));
        REQUIRE(attention.size() == 3);
        for (size_t l = 0; l < 3; ++l)
            CHECK(attention[l]->w_v.data == whole.blocks->held(static_cast<int64_t>(l))->attention.w_v.data);
    }
    {
        // attention_weights() before any pass loads each block once; a block-by-block pass
        // without keeping them loads each block again, once.
        WholeModel model(backend, counted_copy(whole, loads));
        CHECK(model.attention_weights().size() == 3);
        CHECK(loads == std::vector<int>(3, 1));
        model.keep_attention_weights(false);
        size_t visits = 0;
        model.run_blocks(tokens, {.contributions = false},
                         [&](size_t, LayerResult&, Tensor&, const LayerWeights&) { ++visits; });
        CHECK(visits == 3);
        CHECK(loads == std::vector<int>(3, 2));
    }
}

TEST_CASE("a streamed GGUF model of quantized blocks, refilling one block's memory, runs as the model read whole") {
    ScratchDir dir;
    write_text(dir / "q.gguf", quantized_llama_gguf());
    const auto file = std::make_shared<const GgufFile>(dir / "q.gguf");
    OnednnBackend backend;
    WholeModel whole(backend, read_gguf_llama(*file));
    WholeModel streamed(backend, read_gguf_llama_streaming(file));
    for (int64_t T : {1, 6, 16}) {
        CAPTURE(T);
        const std::vector<int> tokens = random_ids(T, QuantizedLlama::vocab);
        const ModelRun expected = whole.run(tokens);
        for (int pass = 0; pass < 2; ++pass) {  // the second pass refills the blocks of the first
            const ModelRun run = streamed.run(tokens);
            CHECK(run.logits.data == expected.logits.data);
            REQUIRE(run.layers.size() == expected.layers.size());
            for (size_t l = 0; l < run.layers.size(); ++l) {
                CHECK(run.layers[l].attention.data == expected.layers[l].attention.data);
                CHECK(run.layers[l].contribution_norms.data == expected.layers[l].contribution_norms.data);
                CHECK(run.residual[l].data == expected.residual[l].data);
            }
        }
    }
    const std::vector<const LayerWeights*> kept = streamed.attention_weights(), read = whole.attention_weights();
    REQUIRE(kept.size() == read.size());
    for (size_t l = 0; l < kept.size(); ++l) CHECK(kept[l]->w_o.data == read[l]->w_o.data);
}

TEST_CASE("a Hugging Face folder streamed from its mapped safetensors runs as read whole, one block at a time") {
    ScratchDir dir;
    const HfFixtureFolders folders = write_hf_fixture_model(dir.path());
    const std::string stories = shared_model_dir("stories260K-hf", {"config.json", "model.safetensors"});
    std::vector<std::string> paths = {folders.single.string(), folders.sharded.string()};
    if (!stories.empty()) paths.push_back(stories);
    OnednnBackend backend;
    for (const std::string& path : paths) {
        CAPTURE(path);
        ModelFiles files = open_model_files(path);
        WholeModel whole(backend, read_model_weights(files));
        files.blocks = BlockLoading::streamed;
        const ModelWeights streamed_weights = read_model_weights(files);
        REQUIRE(streamed_weights.blocks->streams());
        std::vector<int> loads;
        std::vector<const BlockWeights*> refilled;
        WholeModel streamed(backend, counted_copy(streamed_weights, loads, &refilled));
        CHECK(streamed.fingerprint() == whole.fingerprint());
        std::fill(loads.begin(), loads.end(), 0), refilled.clear();
        const int64_t L = whole.description().n_layers;
        const std::vector<int> tokens = random_ids(9, static_cast<int>(whole.description().vocab_size));
        const ModelRun expected = whole.run(tokens);
        for (int pass = 0; pass < 2; ++pass) {
            const ModelRun run = streamed.run(tokens);
            CHECK(run.logits.data == expected.logits.data);
            REQUIRE(run.layers.size() == expected.layers.size());
            for (size_t l = 0; l < run.layers.size(); ++l) {
                CHECK(run.layers[l].attention.data == expected.layers[l].attention.data);
                CHECK(run.residual[l].data == expected.residual[l].data);
            }
        }
        // One block in memory: every block read into the same BlockWeights, once per pass.
        CHECK(loads == std::vector<int>(static_cast<size_t>(L), 2));
        REQUIRE(refilled.size() == static_cast<size_t>(2 * L));
        CHECK(std::count(refilled.begin(), refilled.end(), refilled.front()) == 2 * L);
    }
}

}  // TEST_SUITE("model")
