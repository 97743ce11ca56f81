// The summary compare prints first (and writes to compare.json's "summary"): the head that changed
// most by the chosen measure, the heads whose label changed, the lowest top-1 agreement, and how
// many heads exceed the limit (compare's --fail-above).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "head_compare.hpp"

namespace attn_viz {

struct CompareSummary {
    std::string metric;                  // the measure ranked: js_distance, correlation_distance or a statistic
    std::vector<int64_t> ranked;         // every head, largest metric first (undefined last)
    std::vector<int64_t> label_changes;  // heads labelled differently in A and B, in head order
    int64_t lowest_top1 = -1;            // the head with the lowest top-1 agreement (-1: none measured)
    double fail_above = -1;              // the --fail-above limit (< 0: not asked)
    std::vector<int64_t> failing;        // heads whose metric exceeds fail_above, in head order
};

// Heads in order of `metric`, largest first, undefined (NaN) last, ties in head order.
std::vector<int64_t> ranked_heads(const std::vector<double>& metric);

// metric: comparison_metric(comparison, metric_name); top1: per head, or empty (single layers).
CompareSummary summarize_comparison(const HeadComparison& comparison, const std::vector<double>& metric,
                                    const std::string& metric_name, const std::vector<double>& top1, double fail_above);

// {"metric", "largest": {"head": "L3H1", "layer", "index", "value"}, "label_changes": [...],
//  "lowest_top1_agreement", "fail_above", "heads_above", "num_heads", "ranked": ["L3H1", ...]}.
nlohmann::json compare_summary_json(const CompareSummary& summary, const HeadComparison& comparison,
                                    const std::vector<double>& metric, const std::vector<double>& top1);

// A few lines for stdout: "summary: ..." then the details, each head named LxHy, and on an input too
// short to tell the too-short caveat (labels with a "?").
std::string compare_summary_text(const CompareSummary& summary, const HeadComparison& comparison,
                                 const std::vector<double>& metric, const std::vector<double>& top1);

}  // namespace attn_viz
