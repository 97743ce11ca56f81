#include "model_corpus_run.hpp"

#include "corpus_fingerprint.hpp"
#include "error.hpp"
#include "layer_cost.hpp"
#include "memory_budget.hpp"

namespace attn_viz {

void check_model_run_memory(const ModelDescription& c, int64_t T, uint64_t memory_budget) {
    check_memory(c.n_layers * estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.head_dim, T, T), memory_budget,
                 "running " + std::to_string(c.n_layers) + " layers on " + std::to_string(T) + " tokens");
}

void add_model_corpus(CorpusDocuments& documents, WholeModel& model, const ModelTokenizer& tokenizer, const AnalysisOptions& options,
                      const LoadLimits& limits, CorpusAccumulator& corpus, const ModelCorpusHooks& hooks, Timings& timings) {
    const ModelDescription& c = model.description();
    const std::vector<const LayerWeights*> weights = model.attention_weights();
    nlohmann::json doc;
    std::string where;
    while (next_corpus_document(documents, doc, where, timings)) {
        const std::vector<int> ids = model_sequence_ids(doc, tokenizer, c.max_tokens, limits.memory_budget, where);
        ModelRun run;
        try {
            // The context first: a larger memory budget cannot help a sequence the model cannot take.
            check_model_tokens(ids, c.vocab_size, c.max_tokens);
            check_model_run_memory(c, static_cast<int64_t>(ids.size()), limits.memory_budget);
            Timings::Scope t(timings, "forward");
            run = model.run(ids, true, false, hooks.on_layer);
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::bad_input) throw;
            fail_input(where, e.what());
        }
        if (hooks.on_run) hooks.on_run(where, run);
        Timings::Scope t(timings, "statistics");
        std::vector<const LayerResult*> layers;
        for (const LayerResult& r : run.layers) layers.push_back(&r);
        corpus.add_corpus_sequence(analyze_model(layers, weights, std::vector<int64_t>(ids.begin(), ids.end()), options),
                                   token_sequence_fingerprint(ids), documents.position());
        if (hooks.on_sequence) hooks.on_sequence(corpus.num_sequences());
    }
}

bool next_corpus_document(CorpusDocuments& documents, nlohmann::json& doc, std::string& where, Timings& timings) {
    Timings::Scope t(timings, "load");
    return documents.next(doc, where);
}

CorpusCoverage corpus_run_coverage(const std::string& path, const CorpusShard& shard, const CorpusDocuments& documents,
                                   int64_t num_sequences) {
    if (num_sequences == 0)
        fail_input(path, shard.count == 1 ? "holds no sequences"
                                          : "shard " + shard.text() + " holds no sequences (the corpus holds " +
                                                std::to_string(documents.corpus_sequences()) + ": use at most that many shards)");
    return CorpusCoverage({path, documents.corpus_fingerprint(), documents.corpus_sequences(), shard.count, {shard.index}, {"this run"}});
}

}  // namespace attn_viz
