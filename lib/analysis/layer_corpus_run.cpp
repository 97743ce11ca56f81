#include "layer_corpus_run.hpp"

#include <fmt/format.h>

#include "corpus_fingerprint.hpp"
#include "layer_cost.hpp"
#include "memory_budget.hpp"
#include "token_ids.hpp"

namespace attn_viz {

void check_layer_run_memory(const LayerWeights& w, int64_t T, int64_t S, uint64_t memory_budget) {
    check_memory(estimate_layer_run_bytes(w.d_model, w.num_heads, w.num_kv_heads, w.d_head, T, S), memory_budget,
                 fmt::format("running the layer on {} x {} tokens", T, S));
}

void add_layer_corpus(CorpusDocuments& documents, AttentionLayer& layer, const AnalysisOptions& options,
                      const LoadLimits& limits, CorpusAccumulator& corpus, const LayerCorpusHooks& hooks,
                      Timings& timings) {
    const LayerWeights& weights = layer.weights();
    SequenceStream sequences(documents, weights.d_model, limits);
    std::string where;
    SequenceInput sequence;
    while (true) {
        {
            Timings::Scope t(timings, "load");
            if (!sequences.next(sequence, where)) break;
        }
        const int64_t T = sequence.embeddings.dim(0);
        check_layer_run_memory(weights, T, T, limits.memory_budget);
        AttentionRequest request;
        request.input = &sequence.embeddings;
        request.key_excluded = sequence.key_excluded;
        LayerResult result;
        {
            Timings::Scope t(timings, "attention");
            result = layer.run(request);
        }
        if (hooks.on_run) hooks.on_run(where, result);
        {
            Timings::Scope t(timings, "statistics");
            corpus.add_corpus_sequence(analyze_layer(result, &weights, token_ids_from_labels(sequence.tokens), options),
                                       sequence_fingerprint(sequence.embeddings, sequence.key_excluded),
                                       documents.position());
            if (CorpusMeanMaps* maps = corpus.mean_maps()) maps->add({&result});
        }
        layer.recycle(std::move(result));
        if (hooks.on_sequence) hooks.on_sequence(corpus.num_sequences());
    }
}

}  // namespace attn_viz
