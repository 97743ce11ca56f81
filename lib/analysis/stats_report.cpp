#include "stats_report.hpp"

#include <charconv>
#include <cmath>
#include <initializer_list>

#include <fmt/format.h>

#include "error.hpp"
#include "findings.hpp"
#include "sparse_report.hpp"

namespace attn_viz {

std::string csv_number(double x) {
    if (!std::isfinite(x)) return "";
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
    return std::string(buffer, result.ptr);
}

std::string csv_text(const std::string& text) {
    std::string field = "\"";
    for (char c : text) field += c == '"' ? std::string("\"\"") : std::string(1, c);
    return field + '"';
}

namespace {

nlohmann::json matrix_json(const HeadMatrix& m) {
    nlohmann::json rows = nlohmann::json::array();
    for (int64_t a = 0; a < m.size; ++a) {
        nlohmann::json row = nlohmann::json::array();
        for (int64_t b = 0; b < m.size; ++b) row.push_back(json_number(m.at(a, b)));
        rows.push_back(std::move(row));
    }
    return rows;
}

// Appends `values` to `row`, separated by commas: a pairs.csv row's leading columns, one row per
// pair of heads, without a format string to parse for each.
void append_integers(std::string& row, std::initializer_list<int64_t> values) {
    bool first = true;
    for (int64_t value : values) {
        if (!first) row += ',';
        const fmt::format_int text(value);
        row.append(text.data(), text.size());
        first = false;
    }
}

nlohmann::json head_ref(const ModelAnalysis& a, int64_t index) {
    const HeadId& id = a.head_ids[static_cast<size_t>(index)];
    return {{"index", index}, {"layer", id.layer}, {"head", id.head}};
}

}  // namespace

nlohmann::json json_number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json mean_and_std_json(const RunningMoments& m) {
    return {{"mean", json_number(m.mean_or_nan())}, {"std", json_number(m.population_std())}};
}

nlohmann::json stats_json(const ModelAnalysis& a) {
    const bool corpus = !a.heads_std.empty();
    nlohmann::json j = {{"format", stats_format},           {"num_layers", a.num_layers},
                        {"num_heads", a.num_heads},         {"num_queries", a.num_queries},
                        {"num_keys", a.num_keys},           {"causal", a.causal},
                        {"num_sequences", a.num_sequences}, {"total_queries", a.total_queries}};
    // Per-head statistics (and their std over sequences in corpus mode).
    nlohmann::json heads = nlohmann::json::array();
    for (size_t n = 0; n < a.heads.size(); ++n) {
        nlohmann::json head = head_ref(a, static_cast<int64_t>(n));
        head["label"] = a.labels[n];
        nlohmann::json spread = nlohmann::json::object();
        for (const HeadStatField& f : head_stat_fields()) {
            head[f.name] = json_number(a.heads[n].*f.member);
            if (corpus) spread[f.name] = json_number(a.heads_std[n].*f.member);
        }
        head["output_share"] = head["ablation_importance"];  // the same number under the name that says what it is
        head["special_token_mass"] = {{"cls", json_number(a.heads[n].cls_mass)},
                                      {"sep", json_number(a.heads[n].sep_mass)},
                                      {"last_sep", json_number(a.heads[n].last_sep_mass)},
                                      {"punctuation", json_number(a.heads[n].punctuation_mass)}};
        if (a.labels[n] == "mixed") {
            const NearestPattern p = nearest_pattern(a.heads[n], a.thresholds, label_context(a));
            if (*p.label)
                head["nearest_pattern"] = {{"label", p.label},
                                           {"statistic", p.statistic},
                                           {"score", json_number(p.score)},
                                           {"threshold", json_number(p.threshold)}};
        }
        if (corpus) head["std"] = std::move(spread);
        heads.push_back(std::move(head));
    }
    j["heads"] = std::move(heads);
    // Pairwise matrices.
    for (int m = 0; m < pair_metric_count; ++m) {
        const std::string name = pair_metric_name(static_cast<PairMetric>(m));
        j[name] = matrix_json(a.matrices[static_cast<size_t>(m)]);
        if (corpus) j[fmt::format("{}_std", name)] = matrix_json(a.matrices_std[static_cast<size_t>(m)]);
    }
    // Redundancy.
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& group : a.redundant_groups) {
        nlohmann::json members = nlohmann::json::array();
        for (int64_t index : group) members.push_back(head_ref(a, index));
        groups.push_back(std::move(members));
    }
    j["redundant_groups"] = std::move(groups);
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& [x, y] : a.redundant_pairs) {
        nlohmann::json pair = {{"a", head_ref(a, x)}, {"b", head_ref(a, y)}};
        for (int m = 0; m < pair_metric_count; ++m)
            pair[pair_metric_name(static_cast<PairMetric>(m))] =
                json_number(a.matrices[static_cast<size_t>(m)].at(x, y));
        // The list is the closest pairs; these say what the pair itself shows: alike maps, in one
        // layer, through the first token alone, and whether that makes the pair redundant.
        const PairEvidence e = pair_evidence(a, x, y);
        pair["attend_alike"] = e.attend_alike;
        pair["same_layer"] = e.same_layer;
        pair["both_sinks"] = e.both_sinks;
        pair["redundant"] = e.redundant;
        pairs.push_back(std::move(pair));
    }
    j["redundant_pairs"] = std::move(pairs);
    nlohmann::json thresholds = nlohmann::json::object();
    for (const auto& [name, member] : threshold_fields()) thresholds[name] = a.thresholds.*member;
    j["thresholds"] = std::move(thresholds);
    j["findings"] = findings_json(a, find_findings(a));
    if (!a.sparse.empty()) j["sparse_attention"] = sparse_attention_json(a);
    return j;
}

std::string heads_csv(const ModelAnalysis& a) {
    const bool corpus = !a.heads_std.empty();
    // heads.csv: index,layer,head,label,<statistics>[,<statistic>_std...]
    std::string heads = "index,layer,head,label";
    for (const HeadStatField& f : head_stat_fields()) heads += fmt::format(",{}", f.name);
    if (corpus)
        for (const HeadStatField& f : head_stat_fields()) heads += fmt::format(",{}_std", f.name);
    heads += "\n";
    for (size_t n = 0; n < a.heads.size(); ++n) {
        heads += fmt::format("{},{},{},{}", n, a.head_ids[n].layer, a.head_ids[n].head, a.labels[n]);
        for (const HeadStatField& f : head_stat_fields()) (heads += ',') += csv_number(a.heads[n].*f.member);
        if (corpus)
            for (const HeadStatField& f : head_stat_fields()) (heads += ',') += csv_number(a.heads_std[n].*f.member);
        heads += "\n";
    }
    return heads;
}

std::string pairs_csv(const ModelAnalysis& a) {
    const bool corpus = !a.heads_std.empty();
    // pairs.csv: a,b,layer_a,head_a,layer_b,head_b,<metrics>[,<metric>_std...]
    std::string pairs = "a,b,layer_a,head_a,layer_b,head_b";
    for (int m = 0; m < pair_metric_count; ++m)
        pairs += std::string(",") + pair_metric_name(static_cast<PairMetric>(m));
    if (corpus)
        for (int m = 0; m < pair_metric_count; ++m)
            pairs += fmt::format(",{}_std", pair_metric_name(static_cast<PairMetric>(m)));
    pairs += "\n";
    const int64_t N = static_cast<int64_t>(a.heads.size());
    for (int64_t x = 0; x < N; ++x)
        for (int64_t y = x + 1; y < N; ++y) {
            const HeadId &ix = a.head_ids[static_cast<size_t>(x)], &iy = a.head_ids[static_cast<size_t>(y)];
            append_integers(pairs, {x, y, ix.layer, ix.head, iy.layer, iy.head});
            for (int m = 0; m < pair_metric_count; ++m)
                (pairs += ',') += csv_number(a.matrices[static_cast<size_t>(m)].at(x, y));
            if (corpus)
                for (int m = 0; m < pair_metric_count; ++m)
                    (pairs += ',') += csv_number(a.matrices_std[static_cast<size_t>(m)].at(x, y));
            pairs += "\n";
        }
    return pairs;
}

}  // namespace attn_viz
