// Two checkpoints of one architecture, head by head: each run's analysis, the change of every
// statistic, and how alike the same head's maps are across the two (docs/analysis.md, "compare").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "head_analysis.hpp"
#include "head_similarity.hpp"

namespace attn_viz {

inline constexpr const char* compare_format = "attn-viz/compare@1";

struct HeadComparison {
    ModelAnalysis first, second;    // each run analysed on its own
    std::vector<HeadStats> change;  // [N] second minus first (NaN where either is undefined)
    PairedSimilarities maps;        // [N] head n of first vs head n of second
};

// first/second: one LayerResult per layer of each checkpoint on the same input (same layer count,
// H and visibility); weights likewise, or empty. tokens: [T] or empty.
HeadComparison compare_runs(const std::vector<const LayerResult*>& first,
                            const std::vector<const LayerWeights*>& first_weights,
                            const std::vector<const LayerResult*>& second,
                            const std::vector<const LayerWeights*>& second_weights, const std::vector<int64_t>& tokens,
                            const AnalysisOptions& options);

// The per-head number that `compare --fail-above` tests: "js_distance" (JS distance between the
// head's two maps), "correlation_distance" (1 - their correlation), or a statistic's name (the
// absolute change). Throws Error(usage) naming the option for anything else.
std::vector<double> comparison_metric(const HeadComparison& comparison, const std::string& name);

// Indices of heads whose metric exceeds `limit` (NaN never does).
std::vector<int64_t> heads_above(const std::vector<double>& metric, double limit);

nlohmann::json comparison_json(const HeadComparison& comparison);

// One line per head: labels in both runs, map correlation and JS distance, the largest changes.
std::string comparison_table(const HeadComparison& comparison);

}  // namespace attn_viz
