// compare A B --inputs FILE: both whole models over every sequence of a corpus (or of one shard of
// it, --shard I/N), each sequence compared as `compare --tokens` would and folded into running
// moments (compare_corpus.hpp); and what compare and merge write and print from them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare_corpus.hpp"
#include "compare_report.hpp"
#include "compare_summary.hpp"
#include "corpus_options.hpp"
#include "load_limits.hpp"
#include "output_dir.hpp"

namespace attn_viz_cli {

// Both models over the corpus's sequences ({"text"} encoded as the first model's tokenizer does,
// or {"tokens"}), with the coverage of the shard set; `note` gets "N sequences from FILE ...".
// A sequence the models cannot take throws Error(bad_input) naming its file and line.
attn_viz::CompareCorpusAccumulator compare_models_over_corpus(
    const std::string& a, const std::string& b, const std::string& tokenizer, const CorpusOptionValues& corpus,
    const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits, bool quiet, std::string& note);

// What a corpus comparison reports, from the accumulated moments.
struct CorpusCompareReport {
    attn_viz::CorpusComparison comparison;  // means and spreads
    std::vector<double> metric;             // [N] the --fail-metric of the means
    attn_viz::CompareSummary summary;
    nlohmann::json document;  // compare.json (with "corpora"; the caller adds "provenance")
    std::string text;         // summary, output level and the ranked heads, as compare prints them
};

CorpusCompareReport corpus_compare_report(const attn_viz::CompareCorpusAccumulator& corpus,
                                          const attn_viz::LabelThresholds& thresholds, const std::string& metric_name,
                                          double fail_above);

// Stages compare.json (with `provenance`) and the layers x heads pictures of the mean JS distance,
// map correlation and top-1 agreement in `out`, naming the models as `names`.
void write_corpus_compare_outputs(attn_viz::OutputDir& out, const CorpusCompareReport& report,
                                  const nlohmann::json& provenance, const attn_viz::ComparedNames& names);

}  // namespace attn_viz_cli
