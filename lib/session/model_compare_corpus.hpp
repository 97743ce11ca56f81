// Two whole models compared over every sequence of a corpus (or of one shard of it), each
// sequence compared as one input is (model_compare.hpp) and folded into running moments
// (compare_corpus.hpp); and what a corpus comparison (or a merge of its partials) writes and prints.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare_corpus.hpp"
#include "compare_report.hpp"
#include "compare_summary.hpp"
#include "load_limits.hpp"
#include "model_compare.hpp"
#include "output_dir.hpp"
#include "sequence_stream.hpp"

namespace attn_viz {

// Both models over every document `documents` has left ({"text"} encoded as the first model's
// tokenizer does, or {"tokens"}), with the coverage of the shard set (`path`, `shard`);
// on_sequence: the sequences done. A sequence the models cannot take throws Error(bad_input)
// naming its file and line.
CompareCorpusAccumulator compare_models_over_corpus(ComparedModels& models, CorpusDocuments& documents,
                                                    const std::string& path, const CorpusShard& shard,
                                                    const AnalysisOptions& options, const LoadLimits& limits,
                                                    const std::function<void(int64_t sequences)>& on_sequence);

// What a corpus comparison reports, from the accumulated moments.
struct CorpusCompareReport {
    CorpusComparison comparison;  // means and spreads
    std::vector<double> metric;   // [N] the --fail-metric of the means
    CompareSummary summary;
    nlohmann::json document;  // compare.json (with "corpora"; the caller adds "provenance")
    std::string text;         // summary, output level and the ranked heads, as compare prints them
};

CorpusCompareReport corpus_compare_report(const CompareCorpusAccumulator& corpus, const LabelThresholds& thresholds,
                                          const std::string& metric_name, double fail_above);

// Stages compare.json (with `provenance`) and the layers x heads pictures of the mean JS distance,
// map correlation and top-1 agreement in `out`, naming the models as `names`.
void write_corpus_compare_outputs(OutputDir& out, const CorpusCompareReport& report, const nlohmann::json& provenance,
                                  const ComparedNames& names);

}  // namespace attn_viz
