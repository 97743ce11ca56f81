#include "run_summary.hpp"

#include <string>

#include <fmt/format.h>

#include "stats_report.hpp"

namespace attn_viz {

nlohmann::json summary_json(const ModelAnalysis& analysis) {
    nlohmann::json summary = stats_json(analysis);
    summary.erase("format");
    for (int m = 0; m < pair_metric_count; ++m) {
        const std::string name = pair_metric_name(static_cast<PairMetric>(m));
        summary.erase(name);
        summary.erase(fmt::format("{}_std", name));
    }
    return summary;
}

}  // namespace attn_viz
