// Corpus mode of a streamed model layer-major (add_model_corpus in batches, run_batch_blocks):
// on random quantized GGUF models and stories260K's GGUF, the running moments of every statistic
// equal the sequence-major run's bit for bit (documents of T = 1 and of different lengths, batches
// split by the memory budget, both shards of two merged), and each block is loaded once per batch.
#include <algorithm>
#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "block_sources.hpp"
#include "cli/synthetic_gguf.hpp"
#include "corpus_stats.hpp"
#include "layer_cost.hpp"
#include "model_corpus_run.hpp"
#include "model_files.hpp"
#include "model_tokenizer_file.hpp"
#include "support.hpp"
#include "weight_similarity.hpp"
#include "weights_fingerprint.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// A GGUF model, its blocks loaded through CountedBlocks, which counts the loads of each block (a fresh
// block, or one refilled in the previous block's memory).
struct CountedModel {
    std::unique_ptr<ModelTokenizer> tokenizer;
    std::vector<int> loads;
    std::unique_ptr<WholeModel> model;

    CountedModel(OnednnBackend& backend, const std::string& path) {
        const std::unique_ptr<WholeModel> opened = open_whole_model(backend, path);
        REQUIRE(opened->weights().blocks->streams());
        model = std::make_unique<WholeModel>(backend, counted_copy(opened->weights(), loads));
        tokenizer = read_model_tokenizer(open_model_files(path), "", model->description().vocab_size);
    }
};

// One corpus run of `lines` (shard `shard`) through `m`: sequence-major when `sequence_major`
// (an on_run hook, as whole-run analyses set), else as add_model_corpus chooses. Returns the
// partial's JSON (every running moment at full precision, the sequences' keys and the coverage).
nlohmann::json corpus_partial(CountedModel& m, const std::vector<std::string>& lines, CorpusShard shard,
                              bool sequence_major, const LoadLimits& limits, ModelCorpusPasses* passes = nullptr) {
    OnednnBackend backend;
    CorpusDocuments documents("c.jsonl", lines, shard);
    std::fill(m.loads.begin(), m.loads.end(), 0);
    const CorpusWeights weights = corpus_weights(*m.model, backend);
    CHECK(m.loads == std::vector<int>(m.loads.size(), 1));  // one pass over the blocks for both
    CorpusAccumulator corpus(weights.fingerprint, {});
    AnalysisOptions options = analysis_fixtures::default_options();
    options.backend = &backend;
    options.weight_similarity = &weights.similarity;
    options.sparse_error = true;
    ModelCorpusHooks hooks;
    int64_t layer_steps = 0, layer_results = 0;
    hooks.on_layer = [&](int64_t, int64_t) { ++layer_steps; };
    hooks.on_layers = [&](const std::string&, const std::vector<LayerResult>& layers) {
        layer_results += static_cast<int64_t>(layers.size());
    };
    if (sequence_major) hooks.on_run = [](const std::string&, const ModelRun&) {};
    Timings timings;
    std::fill(m.loads.begin(), m.loads.end(), 0);  // the corpus run's loads only (not the fingerprint's, the weights')
    const ModelCorpusPasses done =
        add_model_corpus(documents, *m.model, *m.tokenizer, options, limits, corpus, hooks, timings);
    CHECK(done.layer_major == !sequence_major);
    const int64_t L = m.model->description().n_layers;
    CHECK(layer_steps == corpus.num_sequences() * L);
    CHECK(layer_results == corpus.num_sequences() * L);
    CHECK(m.model->keeps_attention_weights());  // as before the run: later passes keep them
    if (!sequence_major) {  // it kept no block's attention weights: asking for them reads every block again
        const std::vector<int> loads = m.loads;
        m.model->attention_weights();
        for (size_t l = 0; l < loads.size(); ++l) CHECK(m.loads[l] == loads[l] + 1);
        m.loads = loads;
    }
    corpus.set_coverage(corpus_run_coverage("c.jsonl", shard, documents, corpus.num_sequences()));
    if (passes) *passes = done;
    return corpus.partial_json();
}

// Whether two matrices hold the same numbers, NaN (undefined) in the same places.
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
    return true;
}

// {"tokens": [...]} lines of the given lengths, random ids below `vocab`.
std::vector<std::string> token_lines(const std::vector<int>& lengths, int64_t vocab) {
    std::uniform_int_distribution<int> id(0, static_cast<int>(vocab) - 1);
    std::vector<std::string> lines;
    for (int T : lengths) {
        nlohmann::json tokens = nlohmann::json::array();
        for (int t = 0; t < T; ++t) tokens.push_back(id(rng()));
        lines.push_back(nlohmann::json{{"tokens", tokens}}.dump());
    }
    return lines;
}

// What each sequence of `lengths` is checked against alone (check_model_run_memory).
uint64_t sequence_run_bytes(const ModelDescription& c, int64_t T) {
    return c.n_layers * estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, T, T);
}

// How many batches the documented rule makes of `lengths` under `budget`: consecutive sequences
// while model_corpus_batch_bytes stays within it, at least one each.
int64_t expected_batches(const ModelDescription& c, const std::vector<int>& lengths, uint64_t budget) {
    int64_t batches = 0;
    std::vector<int64_t> batch;
    for (int T : lengths) {
        batch.push_back(T);
        if (batch.size() > 1 && model_corpus_batch_bytes(c, batch) > budget) batch = {T};
        if (batch.size() == 1) ++batches;
    }
    return batches;
}

// Shards 0/2 and 1/2 of `lines` run (layer-major or not) on fresh models and merged.
nlohmann::json merged_shards(OnednnBackend& backend, const std::string& path, const std::vector<std::string>& lines,
                             bool sequence_major) {
    CorpusAccumulator merged;
    for (int64_t shard = 0; shard < 2; ++shard) {
        CountedModel m(backend, path);
        const nlohmann::json partial = corpus_partial(m, lines, {shard, 2}, sequence_major, {});
        merged.merge(CorpusAccumulator::from_partial_json(partial, "shard" + std::to_string(shard)),
                     "shard" + std::to_string(shard));
    }
    return merged.partial_json();
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("corpus_weights: the fingerprint and the weight similarities in one pass, streamed or held, as apart") {
    OnednnBackend backend;
    ScratchDir dir;
    const std::string path = (dir / "m.gguf");
    make_synthetic_gguf(path, "Q8_0", {64, 2, 4, 2, 96, 300}, static_cast<int>(rng()() % 1000));
    CountedModel streamed(backend, path);
    const ModelWeights held = held_copy(streamed.model->weights());  // every block loaded up front
    WholeModel held_model(backend, held);
    for (WholeModel* model : {streamed.model.get(), &held_model}) {
        const CorpusWeights weights = corpus_weights(*model, backend);
        CHECK(weights.fingerprint == model_fingerprint(held));
        const WeightSimilarities apart = weight_similarities(model->attention_weights(), false, backend);
        CHECK(weights.similarity.qk_cosine.size == apart.qk_cosine.size);
        CHECK(same_bits(weights.similarity.qk_cosine.values, apart.qk_cosine.values));
        CHECK(same_bits(weights.similarity.ov_cosine.values, apart.ov_cosine.values));
    }
}

TEST_CASE(
    "a streamed model's corpus runs layer-major with the sequence-major run's moments, loading each block once per "
    "batch") {
    OnednnBackend backend;
    struct Case {
        std::string type;
        SyntheticShape shape;
        std::vector<int> lengths;
    };
    const std::vector<Case> cases = {
        {"Q8_0", {64, 2, 4, 2, 96, 300}, {5, 1, 17, 9, 1, 12, 3, 30, 2, 7, 16, 1, 25}},
        {"Q4_K", {256, 3, 2, 2, 256, 280}, {1, 8, 2, 40, 5, 64, 64, 64, 64, 64, 64, 64, 64}},
        {"F32", {24, 1, 1, 1, 40, 270}, {1, 1, 6, 33}},
    };
    for (const Case& k : cases) {
        CAPTURE(k.type);
        ScratchDir dir;
        const std::string path = (dir / "m.gguf");
        make_synthetic_gguf(path, k.type, k.shape, 7);
        const std::vector<std::string> lines = token_lines(k.lengths, k.shape.vocab);
        const auto n = static_cast<int>(lines.size());
        const auto layers = static_cast<size_t>(k.shape.layers);

        // Sequence-major: every block once per sequence (a one-block model keeps its block loaded).
        CountedModel by_sequence(backend, path);
        const nlohmann::json expected = corpus_partial(by_sequence, lines, {}, true, {});
        CHECK(by_sequence.loads == std::vector<int>(layers, layers > 1 ? n : 1));

        // Layer-major, the whole corpus in one batch: the same moments bit for bit, each block
        // loaded once.
        CountedModel one_batch(backend, path);
        ModelCorpusPasses passes;
        CHECK(corpus_partial(one_batch, lines, {}, false, {}, &passes) == expected);
        CHECK(passes.batches == 1);
        CHECK(passes.largest_batch == n);
        CHECK(one_batch.loads == std::vector<int>(layers, 1));

        // A budget that takes a few sequences at a time: batches by the rule, each loading every block once.
        const ModelDescription& c = one_batch.model->description();
        uint64_t budget = model_corpus_batch_bytes(c, {k.lengths[0], k.lengths[1], k.lengths[2]});
        for (int T : k.lengths) budget = std::max(budget, sequence_run_bytes(c, T));
        const int64_t batches = expected_batches(c, k.lengths, budget);
        CAPTURE(budget);
        CHECK(batches > 1);
        CountedModel budgeted(backend, path);
        CHECK(corpus_partial(budgeted, lines, {}, false, LoadLimits{budget}, &passes) == expected);
        CHECK(passes.batches == batches);
        CHECK(passes.largest_batch < n);
        // Only a batch of one sequence may exceed the budget.
        const int longest = *std::max_element(k.lengths.begin(), k.lengths.end());
        CHECK(passes.largest_batch_bytes <= std::max(budget, model_corpus_batch_bytes(c, {longest})));
        CHECK(budgeted.loads == std::vector<int>(layers, layers > 1 ? static_cast<int>(batches) : 1));

        // Both shards of two, merged: the same merged moments either way.
        CHECK(merged_shards(backend, path, lines, false) == merged_shards(backend, path, lines, true));
    }
}

TEST_CASE("stories260K's GGUF over a corpus of texts: layer-major equals sequence-major") {
    const std::string dir = shared_model_dir("stories260K-gguf", {"stories260K.gguf"});
    if (dir.empty()) return;
    OnednnBackend backend;
    const std::vector<std::string> lines = {
        R"({"text": "Once upon a time, there was a little girl named Lily."})", R"({"text": "She"})",
        R"({"text": "She loved to play outside in the park with her friends and her dog."})", R"({"tokens": [1]})",
        R"({"text": "One day, she saw a big red ball."})"};
    CountedModel by_sequence(backend, dir + "/stories260K.gguf");
    CountedModel by_layer(backend, dir + "/stories260K.gguf");
    ModelCorpusPasses passes;
    CHECK(corpus_partial(by_layer, lines, {}, false, {}, &passes) == corpus_partial(by_sequence, lines, {}, true, {}));
    CHECK(passes.batches == 1);
    CHECK(by_layer.loads == std::vector<int>(by_layer.loads.size(), 1));
}

}  // TEST_SUITE("analysis")
