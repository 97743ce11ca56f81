#include "head_compare.hpp"

#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "findings.hpp"
#include "stats_report.hpp"

namespace attn_viz {

namespace {

nlohmann::json stats_object(const HeadStats& s) {
    nlohmann::json j = nlohmann::json::object();
    for (const HeadStatField& f : head_stat_fields()) j[f.name] = json_number(s.*f.member);
    return j;
}

}  // namespace

HeadComparison compare_runs(const std::vector<const LayerResult*>& first,
                            const std::vector<const LayerWeights*>& first_weights,
                            const std::vector<const LayerResult*>& second,
                            const std::vector<const LayerWeights*>& second_weights, const std::vector<int64_t>& tokens,
                            const AnalysisOptions& options) {
    HeadComparison c;
    c.first = analyze_model(first, first_weights, tokens, options);
    c.second = analyze_model(second, second_weights, tokens, options);
    if (c.first.num_layers != c.second.num_layers || c.first.num_heads != c.second.num_heads)
        fail_input("compare",
                   fmt::format("the checkpoints differ in shape: {} x {} vs {} x {} layers x heads", c.first.num_layers,
                               c.first.num_heads, c.second.num_layers, c.second.num_heads));
    for (size_t n = 0; n < c.first.heads.size(); ++n) {
        HeadStats d;
        for (const HeadStatField& f : head_stat_fields())
            d.*f.member = c.second.heads[n].*f.member - c.first.heads[n].*f.member;
        c.change.push_back(d);
    }
    c.maps = paired_map_similarities(first, second, options.threads);
    return c;
}

std::vector<double> comparison_metric(const HeadComparison& c, const std::string& name) {
    if (name == "js_distance") return c.maps.js_distance;
    std::vector<double> out;
    if (name == "correlation_distance") {
        for (double r : c.maps.correlation) out.push_back(1.0 - r);
        return out;
    }
    for (const HeadStatField& f : head_stat_fields())
        if (name == f.name) {
            for (const HeadStats& d : c.change) out.push_back(std::abs(d.*f.member));
            return out;
        }
    throw Error(
        ErrorKind::usage,
        fmt::format("unknown metric '{}': expected js_distance, correlation_distance or a statistic name", name));
}

std::vector<int64_t> heads_above(const std::vector<double>& metric, double limit) {
    std::vector<int64_t> out;
    for (size_t n = 0; n < metric.size(); ++n)
        if (metric[n] > limit) out.push_back(static_cast<int64_t>(n));
    return out;
}

nlohmann::json comparison_json(const HeadComparison& c) {
    nlohmann::json heads = nlohmann::json::array();
    for (size_t n = 0; n < c.first.heads.size(); ++n) {
        const HeadId& id = c.first.head_ids[n];
        heads.push_back({{"index", n},
                         {"name", head_tag(id)},
                         {"layer", id.layer},
                         {"head", id.head},
                         {"label_a", c.first.labels[n]},
                         {"label_b", c.second.labels[n]},
                         {"map_correlation", json_number(c.maps.correlation[n])},
                         {"map_cosine", json_number(c.maps.cosine[n])},
                         {"map_js_distance", json_number(c.maps.js_distance[n])},
                         {"a", stats_object(c.first.heads[n])},
                         {"b", stats_object(c.second.heads[n])},
                         {"change", stats_object(c.change[n])}});
    }
    return {{"format", compare_format},           {"num_layers", c.first.num_layers}, {"num_heads", c.first.num_heads},
            {"num_queries", c.first.num_queries}, {"num_keys", c.first.num_keys},     {"heads", std::move(heads)}};
}

std::string comparison_table(const HeadComparison& c) {
    std::string out;
    out += fmt::format("{:>5} {:>4} {:<15} {:<15} {:>8} {:>8} {:>9} {:>9}\n", "layer", "head", "label A", "label B",
                       "map corr", "map JS", "d entropy", "d confid");
    auto cell = [](double x) { return std::isfinite(x) ? fmt::format("{:.4f}", x) : std::string("-"); };
    for (size_t n = 0; n < c.first.heads.size(); ++n)
        out += fmt::format("{:5} {:4} {:<15} {:<15} {:>8} {:>8} {:>9} {:>9}\n", c.first.head_ids[n].layer,
                           c.first.head_ids[n].head, shown_label(c.first, static_cast<int64_t>(n)),
                           shown_label(c.second, static_cast<int64_t>(n)), cell(c.maps.correlation[n]),
                           cell(c.maps.js_distance[n]), cell(c.change[n].entropy), cell(c.change[n].confidence));
    return out;
}

}  // namespace attn_viz
