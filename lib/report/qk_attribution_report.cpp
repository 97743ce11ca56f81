#include "qk_attribution_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "colormap.hpp"
#include "figure_matrix.hpp"
#include "file_write.hpp"
#include "head_names.hpp"
#include "short_number.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

constexpr size_t qk_top_pairs_listed = 10;

// term / score, NaN for a score of 0.
double score_share(const QkAttribution& a, double value) { return a.score == 0 ? NAN : value / a.score; }

// "19%" of the score, or "-" when the score is 0.
std::string percent_of_score(const QkAttribution& a, double value) {
    const double share = score_share(a, value);
    return std::isfinite(share) ? fmt::format("{:.0f}%", 100 * share) : "-";
}

std::string qk_head_name(const QkAttribution& a) { return head_name(a.layer, a.head); }

// The token at position p as the findings quote it: 'text', or the position alone without labels.
std::string quoted_token(const std::vector<std::string>& token_labels, int64_t p) {
    return p < static_cast<int64_t>(token_labels.size()) ? fmt::format("'{}'", token_labels[static_cast<size_t>(p)])
                                                         : fmt::format("token {}", p);
}

nlohmann::json side_totals(const QkAttribution& a, const std::vector<std::string>& names,
                           const std::vector<double>& totals) {
    nlohmann::json side = nlohmann::json::array();
    for (size_t x = 0; x < names.size(); ++x)
        side.push_back({{"component", names[x]},
                        {"total", json_number(totals[x])},
                        {"share", json_number(score_share(a, totals[x]))}});
    return side;
}

// qk_attribution_<head>.png: the [Q, K] terms, white at 0.
void write_qk_png(OutputDir& out, const QkAttribution& a, const std::vector<std::string>& token_labels,
                  const ReportOptions& o) {
    Tensor matrix({a.query_count(), a.key_count()});
    double reach = 1e-12;
    for (size_t x = 0; x < a.terms.size(); ++x) {
        matrix.data[x] = static_cast<float>(a.terms[x]);
        reach = std::max(reach, std::abs(a.terms[x]));
    }
    const std::string title = fmt::format(
        "QK attribution of {}: {} (position {}) to {} (position {}), score {} (row: query side, column: key side)",
        qk_head_name(a), quoted_token(token_labels, a.query_position), a.query_position,
        quoted_token(token_labels, a.key_position), a.key_position, short_number(a.score, "{:.3g}"));
    write_rectangular_matrix_png(out.file(fmt::format("qk_attribution_{}.png", qk_head_name(a))), matrix,
                                 {a.query_components, a.key_components, "query side", "key side"}, title,
                                 diverging_colormap, static_cast<float>(-reach), static_cast<float>(reach),
                                 "term of the score", o.style.max_px, PoolMode::mean);
}

// The key-side total of the previous-token heads at the key together (0 for none), and whether it
// exceeds every other key-side component's in absolute value.
struct PreviousTokenPart {
    double total = 0;
    bool dominant = false;
};
PreviousTokenPart previous_token_part(const QkAttribution& a) {
    const std::vector<double> key = a.key_totals();
    PreviousTokenPart part;
    double largest_other = 0;
    for (int64_t c = 0; c < a.key_count(); ++c) {
        const bool previous = std::find(a.previous_token_heads.begin(), a.previous_token_heads.end(),
                                        a.key_components[c]) != a.previous_token_heads.end();
        if (previous)
            part.total += key[c];
        else
            largest_other = std::max(largest_other, std::abs(key[c]));
    }
    part.dominant = !a.previous_token_heads.empty() && std::abs(part.total) > largest_other;
    return part;
}

// "; on the key side the previous-token heads at ' b' (L3H5 +0.80, L3H6 +0.73) give +1.53 together
// (25% of the score), more than any other component: an induction circuit, K-composition with them",
// or "" when no earlier head is a previous-token head at the key.
std::string previous_token_clause(const QkAttribution& a, const std::vector<std::string>& token_labels) {
    if (a.previous_token_heads.empty()) return "";
    const std::vector<double> key = a.key_totals();
    std::string heads;
    for (const std::string& name : a.previous_token_heads) {
        const auto at = std::find(a.key_components.begin(), a.key_components.end(), name);
        if (at != a.key_components.end())
            heads += fmt::format("{}{} {}", heads.empty() ? "" : ", ", name,
                                 signed_short_number(key[static_cast<size_t>(at - a.key_components.begin())]));
    }
    const PreviousTokenPart part = previous_token_part(a);
    const bool one = a.previous_token_heads.size() == 1;
    return fmt::format("; on the key side the previous-token head{} at {} ({}) give{} {}{} ({} of the score){}",
                       one ? "" : "s", quoted_token(token_labels, a.key_position), heads, one ? "s" : "",
                       signed_short_number(part.total), one ? "" : " together", percent_of_score(a, part.total),
                       part.dominant && part.total > 0 ? ", more than any other component: an induction circuit, "
                                                         "K-composition with the previous-token head" +
                                                             std::string(one ? "" : "s")
                       : part.dominant ? ", more than any other component, against the score"
                                       : "");
}

}  // namespace

std::vector<QkPair> ranked_qk_pairs(const QkAttribution& a) {
    std::vector<QkPair> pairs;
    for (int64_t x = 0; x < a.query_count(); ++x)
        for (int64_t y = 0; y < a.key_count(); ++y) pairs.push_back({x, y, a.term(x, y)});
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const QkPair& p, const QkPair& q) { return std::abs(p.term) > std::abs(q.term); });
    return pairs;
}

int64_t dominant_component(const std::vector<double>& totals) {
    int64_t best = 0;
    for (size_t x = 1; x < totals.size(); ++x)
        if (std::abs(totals[x]) > std::abs(totals[static_cast<size_t>(best)])) best = static_cast<int64_t>(x);
    return best;
}

std::string qk_attribution_finding(const QkAttribution& a, const std::vector<std::string>& token_labels) {
    const std::vector<double> query = a.query_totals(), key = a.key_totals();
    const int64_t q = dominant_component(query), k = dominant_component(key);
    const QkPair top = ranked_qk_pairs(a).front();
    return fmt::format(
               "{} attends from {} (position {}) to {} (position {}), weight {} (score {}), mostly through {} on the "
               "key "
               "side ({}, {} of the score) and {} on the query side ({}, {}); the largest pair is {} x {} ({})",
               qk_head_name(a), quoted_token(token_labels, a.query_position), a.query_position,
               quoted_token(token_labels, a.key_position), a.key_position, short_number(a.attention, "{:.3g}"),
               short_number(a.score, "{:.3g}"), a.key_components[k], signed_short_number(key[k]),
               percent_of_score(a, key[k]), a.query_components[q], signed_short_number(query[q]),
               percent_of_score(a, query[q]), a.query_components[top.query], a.key_components[top.key],
               signed_short_number(top.term)) +
           previous_token_clause(a, token_labels);
}

std::vector<std::string> qk_attribution_findings(const std::vector<QkAttribution>& entries,
                                                 const std::vector<std::string>& token_labels) {
    std::vector<std::string> findings;
    for (const QkAttribution& a : entries) findings.push_back(qk_attribution_finding(a, token_labels));
    return findings;
}

nlohmann::json qk_attribution_json(const QkAttribution& a, const std::vector<std::string>& token_labels) {
    nlohmann::json top = nlohmann::json::array();
    const std::vector<QkPair> pairs = ranked_qk_pairs(a);
    for (size_t r = 0; r < std::min(pairs.size(), qk_top_pairs_listed); ++r)
        top.push_back({{"query_component", a.query_components[pairs[r].query]},
                       {"key_component", a.key_components[pairs[r].key]},
                       {"term", json_number(pairs[r].term)},
                       {"share", json_number(score_share(a, pairs[r].term))}});
    auto token = [&](int64_t p) -> nlohmann::json {
        return p < static_cast<int64_t>(token_labels.size()) ? nlohmann::json(token_labels[p]) : nlohmann::json();
    };
    return {{"name", qk_head_name(a)},
            {"layer", a.layer},
            {"head", a.head},
            {"kv_head", a.kv_head},
            {"query_position", a.query_position},
            {"query_token", token(a.query_position)},
            {"key_position", a.key_position},
            {"key_token", token(a.key_position)},
            {"score", json_number(a.score)},
            {"term_sum", json_number(a.term_sum)},
            {"attention", json_number(a.attention)},
            {"scale", json_number(a.scale)},
            {"top_pairs", top},
            {"query_totals", side_totals(a, a.query_components, a.query_totals())},
            {"key_totals", side_totals(a, a.key_components, a.key_totals())},
            {"previous_token_heads", a.previous_token_heads},
            {"previous_token_total", json_number(previous_token_part(a).total)},
            {"finding", qk_attribution_finding(a, token_labels)}};
}

nlohmann::json write_qk_attribution_outputs(OutputDir& out, const std::vector<QkAttribution>& entries,
                                            const std::vector<std::string>& token_labels, const ReportOptions& o) {
    std::string csv = "head,query_position,key_position,rank,query_component,key_component,term,share\n";
    nlohmann::json section = nlohmann::json::array();
    for (const QkAttribution& a : entries) {
        const std::string row = fmt::format("{},{},{},", qk_head_name(a), a.query_position, a.key_position);
        const std::vector<QkPair> pairs = ranked_qk_pairs(a);
        for (size_t r = 0; r < pairs.size(); ++r)
            csv += fmt::format("{}{},{},{},{},{}\n", row, r + 1, csv_text(a.query_components[pairs[r].query]),
                               csv_text(a.key_components[pairs[r].key]), csv_number(pairs[r].term),
                               csv_number(score_share(a, pairs[r].term)));
        section.push_back(qk_attribution_json(a, token_labels));
        if (o.pictures) write_qk_png(out, a, token_labels, o);
    }
    write_file_bytes(out.file("qk_attribution.csv"), csv);
    return {{"qk_attribution", section}};
}

}  // namespace attn_viz
