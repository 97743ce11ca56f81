// Corpus mode of one attention layer (attn-viz run --inputs, attn_viz.Layer.run_corpus): every
// input sequence of a corpus, or of its shard, through the layer one at a time, each sequence's
// analysis into running moments (corpus_stats.hpp), so memory does not depend on the number of
// sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "attention.hpp"
#include "corpus_stats.hpp"
#include "head_analysis.hpp"
#include "load_limits.hpp"
#include "sequence_stream.hpp"
#include "timings.hpp"

namespace attn_viz {

// What a layer corpus run tells its caller; each may be empty.
struct LayerCorpusHooks {
    // After each sequence's layer run, before its analysis: the document's name ("c.jsonl:3") and
    // the result (warnings, FLOP counts).
    std::function<void(const std::string& where, const LayerResult& result)> on_run;
    std::function<void(int64_t sequences)> on_sequence;  // after each sequence is counted: how many so far
};

// Refuses (Error bad_input) a run of the layer `w` on T queries x S keys beyond `memory_budget`.
void check_layer_run_memory(const LayerWeights& w, int64_t T, int64_t S, uint64_t memory_budget);

// Every input sequence `documents` has left ({"tokens", "embeddings", "attention_mask"}, relative
// {"npy": ...} files under documents.base_dir()) through `layer`, each run's analysis (`options`:
// thresholds, sparse error, threads, weight similarity) added to `corpus` at its corpus position,
// and its map to corpus.mean_maps() when it keeps them.
// A malformed sequence throws Error(bad_input) naming the document. Timed as "load", "attention"
// and "statistics".
void add_layer_corpus(CorpusDocuments& documents, AttentionLayer& layer, const AnalysisOptions& options,
                      const LoadLimits& limits, CorpusAccumulator& corpus, const LayerCorpusHooks& hooks,
                      Timings& timings);

}  // namespace attn_viz
