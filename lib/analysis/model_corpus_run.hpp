// Corpus mode of a whole model (attn-viz model --inputs, attn_viz.Model.run_corpus): every
// document of a corpus, or of its shard, through the model one at a time, each sequence's
// analysis into running moments (corpus_stats.hpp), so memory does not depend on the number of
// sequences.
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
#include "whole_model.hpp"

namespace attn_viz {

// What a corpus run tells its caller; each may be empty.
struct ModelCorpusHooks {
    StepCallback on_layer;  // after each block of each forward pass (progress, interruption)
    // After each forward pass, before its analysis: the document's name ("c.jsonl:3") and the run
    // (warnings, logit attribution, patching).
    std::function<void(const std::string& where, const ModelRun& run)> on_run;
    std::function<void(int64_t sequences)> on_sequence;  // after each sequence is counted: how many so far
};

// Refuses (Error bad_input) a forward pass over T tokens whose layer runs exceed `memory_budget`.
void check_model_run_memory(const ModelDescription& model, int64_t T, uint64_t memory_budget);

// Every document `documents` has left (model_sequence_ids: {"text"} encoded by `tokenizer`, or
// {"tokens"}) through `model`, each run's analysis (`options`: thresholds, sparse error, threads,
// weight similarity) added to `corpus` at its corpus position. A sequence the model cannot take
// (ids past the vocabulary, longer than the context, over limits.memory_budget) throws
// Error(bad_input) naming the document. Timed as "load", "forward" and "statistics".
void add_model_corpus(CorpusDocuments& documents, WholeModel& model, const ModelTokenizer& tokenizer, const AnalysisOptions& options,
                      const LoadLimits& limits, CorpusAccumulator& corpus, const ModelCorpusHooks& hooks, Timings& timings);

// Reads the next document of `documents` into `doc`, named in `where` ("c.jsonl:3"), timed as
// "load"; false at the end.
bool next_corpus_document(CorpusDocuments& documents, nlohmann::json& doc, std::string& where, Timings& timings);

// Which shard of which corpus (named `path`) a run of `num_sequences` sequences from `documents`,
// read to the end, covers. Throws Error(bad_input) when the run took no sequence.
CorpusCoverage corpus_run_coverage(const std::string& path, const CorpusShard& shard, const CorpusDocuments& documents,
                                   int64_t num_sequences);

}  // namespace attn_viz
