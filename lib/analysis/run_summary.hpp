// The summary of one analysis that `--json` prints on stdout for scripts over many runs
// (docs/analysis.md, "JSON on stdout"): what stats.json holds but its N x N matrices, so it stays
// small for large models.
#pragma once

#include <nlohmann/json.hpp>

#include "head_analysis.hpp"

namespace attn_viz {

inline constexpr const char* summary_format = "attn-viz/summary@1";

// stats_json(analysis) without the matrices (correlation, cosine, ... and their _std): the sizes,
// the per-head table (`heads`: layer, head, label, every statistic, `std` over a corpus),
// `redundant_groups`, `redundant_pairs` and `thresholds`. Findings in words belong here too,
// under a `findings` key, once the analysis states them.
nlohmann::json summary_json(const ModelAnalysis& analysis);

}  // namespace attn_viz
