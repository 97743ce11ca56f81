// compare over a corpus (compare A B --inputs FILE): every per-head comparison measure and every
// output-level measure of each sequence folded into running moments (mean and population std over
// the sequences where the measure is defined), so memory depends on layers x heads only. Partial
// results are saved as "attn-viz/compare-partial@1" JSON (docs/formats.md) with both models'
// fingerprints and the corpus shards covered, so that `attn-viz merge` refuses partials of another
// model pair or corpus, and merges the shards of one run into what the single run gives.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corpus_coverage.hpp"
#include "corpus_stats.hpp"
#include "head_compare.hpp"
#include "output_comparison.hpp"

namespace attn_viz {

inline constexpr const char* compare_partial_format = "attn-viz/compare-partial@1";

// The output-level measures of one sequence, in the order the partial stores them.
inline constexpr std::array<const char*, 5> corpus_output_measures = {"mean_kl", "max_kl", "loss_a", "loss_b",
                                                                      "top1_agreement"};

// What finish() gives: the per-head comparison of the means and, in the same layout, of the
// population standard deviations, so comparison_json and the summary apply to either.
struct CorpusComparison {
    HeadComparison mean;                        // [N] means; labels are those of the mean statistics of A and of B
    HeadComparison spread;                      // [N] population std of each measure (labels as in `mean`)
    std::vector<RunningMoments> top1;           // [N] per-head top-1 agreement
    std::vector<RunningMoments> label_changed;  // [N] 1 for a sequence where the head's labels differ
    std::vector<RunningMoments> output;         // [corpus_output_measures.size()], empty: no logits (encoders)
    int64_t num_sequences = 0;
};

class CompareCorpusAccumulator {
public:
    // Empty, to merge partials into: fingerprints and thresholds become those of the first.
    CompareCorpusAccumulator() = default;
    // A corpus run of the model pair fingerprinted `model_a`, `model_b` (WholeModel::fingerprint),
    // labelling heads with `thresholds`.
    CompareCorpusAccumulator(uint64_t model_a, uint64_t model_b, const LabelThresholds& thresholds);

    // One sequence's comparison. top1: [N] per-head top-1 agreement; output: null for models
    // without logits. The first fixes the layout; a later one of another layout throws
    // Error(bad_input).
    void add(const HeadComparison& comparison, const std::vector<double>& top1, const OutputComparison* output);

    // Adds another accumulator's sequences; `where` names it. Refuses (Error bad_input naming
    // `where`) another layout, another model pair, other thresholds or overlapping shards.
    void merge(const CompareCorpusAccumulator& other, const std::string& where);

    void set_coverage(CorpusCoverage coverage) { coverage_ = std::move(coverage); }
    const CorpusCoverage& coverage() const { return coverage_; }
    int64_t num_sequences() const { return num_sequences_; }
    const LabelThresholds& thresholds() const { return thresholds_; }
    uint64_t model_a() const { return model_a_; }  // the compared models' fingerprints
    uint64_t model_b() const { return model_b_; }

    // Means and spreads; heads labelled from their mean statistics with `thresholds`.
    CorpusComparison finish(const LabelThresholds& thresholds) const;

    nlohmann::json partial_json() const;
    // Validates everything (format, sizes, counts, finite numbers, fingerprints, coverage) before
    // use; throws Error(bad_input, "<where>: ...").
    static CompareCorpusAccumulator from_partial_json(const nlohmann::json& json, const std::string& where);
    void save_partial(const std::string& path) const;  // atomically

private:
    int64_t num_layers_ = 0, num_heads_ = 0, num_sequences_ = 0, max_queries_ = 0, max_keys_ = 0;
    bool has_output_ = false;
    std::vector<RunningMoments> heads_;   // [N * measures_per_head()], head-major
    std::vector<RunningMoments> output_;  // [corpus_output_measures.size()] when has_output_
    uint64_t model_a_ = 0, model_b_ = 0;
    LabelThresholds thresholds_;
    CorpusCoverage coverage_;
    std::string source_ = "this run";  // the first partial merged (for messages)
};

// compare.json of a corpus: comparison_json of the means, each head's measures also as
// "<measure>_std", with "top1_agreement", "label_changed" (fraction of sequences whose labels
// differ) and their _std; "sequences"; and "output" (each measure's mean, its _std, "sequences")
// when the models have logits. The caller adds "summary" and "provenance".
nlohmann::json corpus_comparison_json(const CorpusComparison& comparison);

// Means of the per-head top-1 agreement ([N], NaN where never defined).
std::vector<double> mean_top1(const CorpusComparison& comparison);

}  // namespace attn_viz
