// The order of report.html's table columns and the notes under the tables
// (HtmlReportInput::column_order, table_notes).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn_viz {

// "heads": layer, head, label; then what labels rest on (positional masses, induction), how spread
// the attention is (entropy, confidence, keys_for_90, distance, margin), how much the head matters
// (contribution, ablation); any other statistic; index last.
// "redundant_pairs": the two heads, the redundant flag, js_distance, then the other metrics.
std::map<std::string, std::vector<std::string>> report_column_order();

// What the "heads" and "redundant_pairs" tables hold, in a sentence each; stats: stats.json (for
// thresholds.redundancy_js).
std::map<std::string, std::string> report_table_notes(const nlohmann::json& stats);

}  // namespace attn_viz
