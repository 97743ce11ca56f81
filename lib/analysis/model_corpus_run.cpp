#include "model_corpus_run.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "corpus_fingerprint.hpp"
#include "error.hpp"
#include "layer_cost.hpp"
#include "memory_budget.hpp"

namespace attn_viz {
namespace {

// One document of the corpus, read and checked for the model: its name, ids and corpus position.
struct CorpusSequence {
    std::string where;
    std::vector<int> ids;
    std::vector<int> token_types;  // a text pair's (one per id), or empty
    std::vector<TokenRole> roles;  // one per id (token_roles)
    int64_t position = 0;
};

// Reads the next document into `s`, its ids checked as a run takes them (the context first: a
// larger memory budget cannot help a sequence the model cannot take; then the memory of its run
// alone); false at the end.
bool next_corpus_sequence(CorpusDocuments& documents, const WholeModel& model, const ModelTokenizer& tokenizer,
                          const LoadLimits& limits, CorpusSequence& s, Timings& timings) {
    const ModelDescription& c = model.description();
    nlohmann::json doc;
    if (!next_corpus_document(documents, doc, s.where, timings)) return false;
    EncodedText input = model_sequence_ids(doc, tokenizer, c.max_tokens, limits, s.where);
    s.ids = std::move(input.ids);
    s.token_types = std::move(input.type_ids);
    s.position = documents.position();
    try {
        check_model_tokens(s.ids, c.vocab_size, c.max_tokens);
        check_model_run_memory(c, static_cast<int64_t>(s.ids.size()), limits.memory_budget);
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        fail_input(s.where, e.what());
    }
    s.roles = token_roles(tokenizer, s.ids);
    return true;
}

// Sequence `s`'s layers told to the hooks, analysed and added to `corpus` at its position.
void add_sequence_analysis(const CorpusSequence& s, const std::vector<LayerResult>& layers,
                           const std::vector<const LayerWeights*>& weights, const AnalysisOptions& options,
                           CorpusAccumulator& corpus, const ModelCorpusHooks& hooks, Timings& timings) {
    Timings::Scope t(timings, "statistics");
    std::vector<const LayerResult*> results;
    for (const LayerResult& r : layers) results.push_back(&r);
    corpus.add_corpus_sequence(
        analyze_model(results, weights, std::vector<int64_t>(s.ids.begin(), s.ids.end()), options, s.roles),
        token_sequence_fingerprint(s.ids, s.token_types), s.position);
    if (CorpusMeanMaps* maps = corpus.mean_maps()) maps->add(results);  // its layout checked by the line above
    if (hooks.on_sequence) hooks.on_sequence(corpus.num_sequences());
}

// Runs `call` (a forward pass), naming the document `*where` points to when it throws a bad_input
// error.
template <typename Call>
void naming_failing_document(const std::string* const& where, Call call) {
    try {
        call();
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        fail_input(*where, e.what());
    }
}

// The weights each sequence's analysis takes: none when `options` carries the weight
// similarities (the analyses read nothing else of them), else every block's attention weights
// (a streamed model reads the blocks no pass has loaded yet).
std::vector<const LayerWeights*> analysed_weights(const WholeModel& model, const AnalysisOptions& options) {
    if (options.weight_similarity) return {};
    return model.attention_weights();
}

// Sequence-major: each document through the whole model, then its analysis.
void add_sequences_one_by_one(CorpusDocuments& documents, WholeModel& model, const ModelTokenizer& tokenizer,
                              const AnalysisOptions& options, const LoadLimits& limits, CorpusAccumulator& corpus,
                              const ModelCorpusHooks& hooks, Timings& timings) {
    const std::vector<const LayerWeights*> weights = analysed_weights(model, options);
    CorpusSequence s;
    const std::string* where = &s.where;
    while (next_corpus_sequence(documents, model, tokenizer, limits, s, timings)) {
        ModelRun run;
        naming_failing_document(where, [&] {
            Timings::Scope t(timings, "forward");
            // Logits only for whole-run analyses (the on_run hook), which read them.
            run = model.run(s.ids, {.logits = static_cast<bool>(hooks.on_run), .token_types = s.token_types},
                            hooks.on_layer);
        });
        if (hooks.on_layers) hooks.on_layers(s.where, run.layers);
        if (hooks.on_run) hooks.on_run(s.where, run);
        add_sequence_analysis(s, run.layers, weights, options, corpus, hooks, timings);
    }
}

// The next layer-major batch: `pending` (the document the previous batch had no room for) and the
// documents after it while the batch fits the budget; the first that does not becomes `pending`.
// Empty at the end of the corpus.
std::vector<CorpusSequence> next_corpus_batch(CorpusDocuments& documents, const WholeModel& model,
                                              const ModelTokenizer& tokenizer, const LoadLimits& limits,
                                              std::optional<CorpusSequence>& pending, Timings& timings) {
    std::vector<CorpusSequence> batch;
    std::vector<int64_t> lengths;
    CorpusSequence s;
    while (pending || next_corpus_sequence(documents, model, tokenizer, limits, s, timings)) {
        if (pending) s = std::move(*pending), pending.reset();
        lengths.push_back(static_cast<int64_t>(s.ids.size()));
        if (!batch.empty() && model_corpus_batch_bytes(model.description(), lengths) > limits.memory_budget) {
            pending = std::move(s);
            break;
        }
        batch.push_back(std::move(s));
    }
    return batch;
}

// Layer-major: batches of documents through the model block by block, each sequence analysed when
// its last block is done, in corpus order.
ModelCorpusPasses add_sequences_layer_major(CorpusDocuments& documents, WholeModel& model,
                                            const ModelTokenizer& tokenizer, const AnalysisOptions& options,
                                            const LoadLimits& limits, CorpusAccumulator& corpus,
                                            const ModelCorpusHooks& hooks, Timings& timings) {
    // Given the weight similarities, the passes keep no block's attention weights either (a 7B
    // model's are 256 MB a layer in float32); the model's setting comes back when the run ends,
    // however it ends.
    struct KeepingRestored {
        WholeModel& model;
        const bool keep = model.keeps_attention_weights();
        ~KeepingRestored() { model.keep_attention_weights(keep); }
    } restored{model};
    if (options.weight_similarity) model.keep_attention_weights(false);
    const std::vector<const LayerWeights*> weights = analysed_weights(model, options);
    const int64_t L = model.description().n_layers;
    ModelCorpusPasses passes;
    passes.layer_major = true;
    std::optional<CorpusSequence> pending;
    for (;;) {
        const std::vector<CorpusSequence> batch =
            next_corpus_batch(documents, model, tokenizer, limits, pending, timings);
        if (batch.empty()) break;
        std::vector<int64_t> lengths;
        std::vector<EncodedText> inputs;
        for (const CorpusSequence& s : batch)
            inputs.push_back({s.ids, s.token_types}), lengths.push_back(static_cast<int64_t>(s.ids.size()));
        ++passes.batches;
        passes.largest_batch = std::max(passes.largest_batch, static_cast<int64_t>(batch.size()));
        passes.largest_batch_bytes =
            std::max(passes.largest_batch_bytes, model_corpus_batch_bytes(model.description(), lengths));

        // Step 1: the batch block by block; each sequence keeps its layers' results.
        std::vector<std::vector<LayerResult>> layers(batch.size());
        const std::string* running = &batch[0].where;  // the document the forward is on, for an error's message
        naming_failing_document(running, [&] {
            Timings::Scope t(timings, "forward");
            model.run_batch_blocks(
                inputs, true, false,
                [&](size_t i, size_t l, LayerResult& result, const LayerWeights&) {
                    // Kept until the sequence's last block: not with its block's W_O Gram ([H d_h]^2;
                    // corpus mode computed the weight similarities before the first sequence).
                    result.output_gram.reset();
                    layers[i].push_back(std::move(result));
                    running = &batch[(i + 1) % batch.size()].where;
                    if (hooks.on_layer) hooks.on_layer(static_cast<int64_t>(l) + 1, L);
                },
                &timings);
        });
        // Step 2: each sequence's analysis in corpus order, its results let go once counted.
        for (size_t i = 0; i < batch.size(); ++i) {
            if (hooks.on_layers) hooks.on_layers(batch[i].where, layers[i]);
            add_sequence_analysis(batch[i], layers[i], weights, options, corpus, hooks, timings);
            layers[i].clear();
        }
    }
    return passes;
}

}  // namespace

void check_model_run_memory(const ModelDescription& c, int64_t T, uint64_t memory_budget) {
    check_memory(c.n_layers * estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, T, T), memory_budget,
                 fmt::format("running {} layers on {} tokens", c.n_layers, T));
}

uint64_t model_corpus_batch_bytes(const ModelDescription& c, const std::vector<int64_t>& lengths) {
    const int64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    uint64_t bytes = estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, longest, longest);
    for (int64_t T : lengths) {
        const uint64_t results =
            saturating_product(static_cast<uint64_t>(c.n_layers),
                               estimate_layer_result_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, T, T));
        const uint64_t residual = saturating_product(static_cast<uint64_t>(T * c.dim), sizeof(float));
        for (uint64_t term : {results, residual}) bytes = bytes > UINT64_MAX - term ? UINT64_MAX : bytes + term;
    }
    return bytes;
}

CorpusWeights corpus_weights(const WholeModel& model, OnednnBackend& backend) {
    const ModelDescription& d = model.description();
    CorpusWeights weights{0, {HeadMatrix(d.n_layers * d.n_heads), HeadMatrix(d.n_layers * d.n_heads)}};
    int64_t first_head = 0;
    weights.fingerprint = model.fingerprint([&](int64_t, const BlockWeights& block) {
        add_layer_weight_similarities(weights.similarity, first_head, block.attention, backend);
        first_head += block.attention.num_heads;
    });
    return weights;
}

ModelCorpusPasses add_model_corpus(CorpusDocuments& documents, WholeModel& model, const ModelTokenizer& tokenizer,
                                   const AnalysisOptions& options, const LoadLimits& limits, CorpusAccumulator& corpus,
                                   const ModelCorpusHooks& hooks, Timings& timings) {
    if (model.weights().blocks->streams() && !hooks.on_run)
        return add_sequences_layer_major(documents, model, tokenizer, options, limits, corpus, hooks, timings);
    add_sequences_one_by_one(documents, model, tokenizer, options, limits, corpus, hooks, timings);
    return {};
}

bool next_corpus_document(CorpusDocuments& documents, nlohmann::json& doc, std::string& where, Timings& timings) {
    Timings::Scope t(timings, "load");
    return documents.next(doc, where);
}

CorpusCoverage corpus_run_coverage(const std::string& path, const CorpusShard& shard, const CorpusDocuments& documents,
                                   int64_t num_sequences) {
    if (num_sequences == 0)
        fail_input(path,
                   shard.count == 1
                       ? "holds no sequences"
                       : fmt::format("shard {} holds no sequences (the corpus holds {}: use at most that many shards)",
                                     shard.text(), documents.corpus_sequences()));
    return CorpusCoverage(
        {path, documents.corpus_fingerprint(), documents.corpus_sequences(), shard.count, {shard.index}, {"this run"}});
}

}  // namespace attn_viz
