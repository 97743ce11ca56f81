// The outputs of QK attribution (qk_attribution.hpp), one entry per attributed head:
// qk_attribution.csv (every query-side x key-side pair of every head, ranked), a query-side x
// key-side picture per head (qk_attribution_L5H1.png), the stats.json section and the findings.
// Token texts come from the caller (token_labels: [T], one per position of the run), so these
// writers see no tokenizer. Everything is in the entries' order, ties broken by component order:
// the outputs are the same bytes for the same attributions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "output_dir.hpp"
#include "qk_attribution.hpp"
#include "report.hpp"

namespace attn_viz {

// One term of the matrix: query-side component `query`, key-side component `key`.
struct QkPair {
    int64_t query = 0, key = 0;
    double term = 0;
};

// Every pair of `a` by |term|, largest first (equal ones in query then key order).
std::vector<QkPair> ranked_qk_pairs(const QkAttribution& a);

// The component of the largest total in absolute value on one side (totals: query_totals() or
// key_totals(); the first of equal ones).
int64_t dominant_component(const std::vector<double>& totals);

// One sentence per entry: "L5H1 attends from ' ball' (position 7) to ' red' (position 3), weight
// 0.83 (score 6.24), mostly through L4H4 on the key side (+1.2, 19% of the score) and L3 mlp on the
// query side (+2.2, 36%); the largest pair is L3 mlp x L4H4 (+0.41)", then, where earlier heads
// attend from the key to the token before it (previous_token_heads), their key-side part together
// and, when it exceeds every other key-side component, that this is an induction circuit
// (K-composition with them).
std::string qk_attribution_finding(const QkAttribution& a, const std::vector<std::string>& token_labels);
std::vector<std::string> qk_attribution_findings(const std::vector<QkAttribution>& entries,
                                                 const std::vector<std::string>& token_labels);

// Writes qk_attribution.csv (head, query_position, key_position, rank, query_component,
// key_component, term, share: every pair of every entry, ranked within its entry by |term|; share =
// term / score) and, unless --stats-only, qk_attribution_<head>.png for each entry (the terms
// [Q, K] on the diverging colormap over [-m, m], m the largest |term|; the entries' heads must
// differ); returns stats.json's {"qk_attribution": [qk_attribution_json of each entry]}.
nlohmann::json write_qk_attribution_outputs(OutputDir& out, const std::vector<QkAttribution>& entries,
                                            const std::vector<std::string>& token_labels, const ReportOptions& options);

// One entry of the stats.json section: {"name": "L5H1", "layer", "head", "kv_head", "query_position",
// "query_token", "key_position", "key_token", "score", "term_sum", "attention", "scale", "top_pairs":
// the 10 largest pairs by |term| [{"query_component", "key_component", "term", "share"}],
// "query_totals" and "key_totals": each side's components in order [{"component", "total",
// "share"}], "previous_token_heads" (names), "previous_token_total" (their key-side part), "finding"}.
nlohmann::json qk_attribution_json(const QkAttribution& a, const std::vector<std::string>& token_labels);

}  // namespace attn_viz
