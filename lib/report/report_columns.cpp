// Column order of report.html's tables (see report_columns.hpp).
#include "report_columns.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "head_analysis.hpp"
#include "head_stats.hpp"

namespace attn_viz {

namespace {

// `first`, then the names of `rest` not in it.
std::vector<std::string> ordered(std::vector<std::string> first, const std::vector<std::string>& rest) {
    for (const std::string& name : rest)
        if (std::find(first.begin(), first.end(), name) == first.end()) first.push_back(name);
    return first;
}

}  // namespace

std::map<std::string, std::vector<std::string>> report_column_order() {
    std::vector<std::string> statistics, metrics;
    for (const HeadStatField& f : head_stat_fields()) statistics.push_back(f.name);
    for (int m = 0; m < pair_metric_count; ++m) metrics.push_back(pair_metric_name(static_cast<PairMetric>(m)));
    std::vector<std::string> heads =
        ordered({"stack", "layer", "head", "label", "previous_token_mass", "next_token_mass", "self_mass",
                 "first_token_mass", "induction", "duplicate_token", "entropy", "normalized_entropy", "confidence",
                 "keys_for_90", "mean_distance", "logit_margin", "contribution", "ablation_importance"},
                statistics);
    heads.push_back("index");
    return {{"heads", heads},
            {"redundant_pairs", ordered({"a", "b", "redundant", "js_distance", "attend_alike", "same_layer",
                                         "both_sinks", "output_cosine"},
                                        metrics)}};
}

std::map<std::string, std::string> report_table_notes(const nlohmann::json& stats) {
    const nlohmann::json cut = stats.value("/thresholds/redundancy_js"_json_pointer, nlohmann::json(nullptr)),
                         output_cut =
                             stats.value("/thresholds/redundancy_output_cosine"_json_pointer, nlohmann::json(nullptr));
    const auto text = [](const nlohmann::json& x) { return x.is_number() ? x.dump() : std::string("unknown"); };
    return {{"heads",
             "One row per head. Masses are the mean share of a query's attention on that key; entropy in nats. "
             "Hover a number for its full value; click a column header to sort."},
            {"redundant_pairs",
             fmt::format("The closest pairs of heads by Jensen-Shannon distance of their maps, closest first, whether "
                         "or not they are redundant: attend_alike = js_distance at most thresholds.redundancy_js ({}); "
                         "redundant = they attend alike and write alike, output_cosine (computed within a layer) at "
                         "least thresholds.redundancy_output_cosine ({}), and are not both sink heads (both_sinks: "
                         "alike through the first token alone).",
                         text(cut), text(output_cut))}};
}

}  // namespace attn_viz
