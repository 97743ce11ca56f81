// Corpus mode of a whole model (attn-viz model --inputs, attn_viz.Model.run_corpus): every
// document of a corpus, or of its shard, through the model one at a time (or, for a streamed
// model, a batch at a time layer by layer), each sequence's analysis into running moments
// (corpus_stats.hpp), so memory does not depend on the number of sequences.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "corpus_stats.hpp"
#include "head_analysis.hpp"
#include "load_limits.hpp"
#include "model_run.hpp"
#include "model_tokenizer.hpp"
#include "sequence_stream.hpp"
#include "timings.hpp"
#include "weight_similarity.hpp"
#include "whole_model.hpp"

namespace attn_viz {

// What a corpus run tells its caller; each may be empty.
struct ModelCorpusHooks {
    StepCallback on_layer;  // after each block of each sequence (progress, interruption)
    // After each sequence's blocks, before its analysis: the document's name ("c.jsonl:3") and its
    // layers' results (warnings).
    std::function<void(const std::string& where, const std::vector<LayerResult>& layers)> on_layers;
    // After each forward pass, before its analysis: the document's name and the whole run, with
    // its residual streams and logits (logit attribution, patching). Setting it runs every
    // sequence alone (sequence-major).
    std::function<void(const std::string& where, const ModelRun& run)> on_run;
    std::function<void(int64_t sequences)> on_sequence;  // after each sequence is counted: how many so far
};

// How a corpus run went through the model: sequence by sequence, or (layer_major) in batches of
// sequences run block by block, each block loaded once per batch.
struct ModelCorpusPasses {
    bool layer_major = false;
    int64_t batches = 0;               // layer-major: how many batches
    int64_t largest_batch = 0;         // the most sequences in one batch
    uint64_t largest_batch_bytes = 0;  // the largest batch's model_corpus_batch_bytes
};

// Refuses (Error bad_input) a forward pass over T tokens whose layer runs exceed `memory_budget`.
void check_model_run_memory(const ModelDescription& model, int64_t T, uint64_t memory_budget);

// The memory a layer-major batch of sequences of `lengths` tokens is budgeted at: one layer run
// at the longest length (estimate_layer_run_bytes) plus, per sequence, its residual stream [T, D]
// and its n_layers layer results (estimate_layer_result_bytes), kept until its analysis.
uint64_t model_corpus_batch_bytes(const ModelDescription& model, const std::vector<int64_t>& lengths);

// What a corpus run over `model` needs of its weights before the first sequence, from one pass
// over the blocks (a streamed model reads and decodes each block once for both and keeps none):
// the fingerprint naming its partial (WholeModel::fingerprint) and the weight similarities within
// layers (weight_similarities without across_layers), for add_model_corpus' options.
struct CorpusWeights {
    uint64_t fingerprint = 0;
    WeightSimilarities similarity;
};
CorpusWeights corpus_weights(const WholeModel& model, OnednnBackend& backend);

// Every document `documents` has left (model_sequence_ids: {"text"} encoded by `tokenizer`, or
// {"tokens"}) through `model`, each run's analysis (`options`: thresholds, sparse error, threads,
// weight similarity) added to `corpus` at its corpus position, in corpus order, and its layers to
// corpus.mean_maps() when it keeps them. A sequence the
// model cannot take (ids past the vocabulary, longer than the context, over limits.memory_budget)
// throws Error(bad_input) naming the document. A model that streams its blocks (BlockSource::streams)
// runs layer-major unless hooks.on_run is set: batches of consecutive documents, each as many as
// fit limits.memory_budget by model_corpus_batch_bytes (at least one), with the same results as
// sequence by sequence; given options.weight_similarity, it keeps no block's attention weights
// (keep_attention_weights(false) for the run: memory holds one block). Timed as "load",
// "forward" (layer-major: of which "block loads") and "statistics".
ModelCorpusPasses add_model_corpus(CorpusDocuments& documents, WholeModel& model, const ModelTokenizer& tokenizer,
                                   const AnalysisOptions& options, const LoadLimits& limits, CorpusAccumulator& corpus,
                                   const ModelCorpusHooks& hooks, Timings& timings);

// Reads the next document of `documents` into `doc`, named in `where` ("c.jsonl:3"), timed as
// "load"; false at the end.
bool next_corpus_document(CorpusDocuments& documents, nlohmann::json& doc, std::string& where, Timings& timings);

// Which shard of which corpus (named `path`) a run of `num_sequences` sequences from `documents`,
// read to the end, covers. Throws Error(bad_input) when the run took no sequence.
CorpusCoverage corpus_run_coverage(const std::string& path, const CorpusShard& shard, const CorpusDocuments& documents,
                                   int64_t num_sequences);

}  // namespace attn_viz
