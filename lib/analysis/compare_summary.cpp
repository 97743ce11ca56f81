#include "compare_summary.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "findings.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

std::string tag(const HeadComparison& c, int64_t n) { return head_tag(c.first.head_ids[static_cast<size_t>(n)]); }

std::string number(double x) { return fmt::format("{:.4g}", x); }

nlohmann::json head_entry(const HeadComparison& c, int64_t n, double value) {
    const HeadId& id = c.first.head_ids[static_cast<size_t>(n)];
    return {{"head", head_tag(id)},
            {"layer", id.layer},
            {"head_index", id.head},
            {"index", n},
            {"value", json_number(value)}};
}

}  // namespace

std::vector<int64_t> ranked_heads(const std::vector<double>& metric) {
    std::vector<int64_t> order(metric.size());
    std::iota(order.begin(), order.end(), int64_t{0});
    const auto key = [&](int64_t n) {
        const double x = metric[static_cast<size_t>(n)];
        return std::isnan(x) ? -INFINITY : x;
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return key(x) > key(y); });
    return order;
}

CompareSummary summarize_comparison(const HeadComparison& c, const std::vector<double>& metric,
                                    const std::string& metric_name, const std::vector<double>& top1,
                                    double fail_above) {
    CompareSummary s;
    s.metric = metric_name;
    s.ranked = ranked_heads(metric);
    for (size_t n = 0; n < c.first.labels.size(); ++n)
        if (c.first.labels[n] != c.second.labels[n]) s.label_changes.push_back(static_cast<int64_t>(n));
    for (size_t n = 0; n < top1.size(); ++n)
        if (!std::isnan(top1[n]) && (s.lowest_top1 < 0 || top1[n] < top1[static_cast<size_t>(s.lowest_top1)]))
            s.lowest_top1 = static_cast<int64_t>(n);
    s.fail_above = fail_above;
    if (fail_above >= 0) s.failing = heads_above(metric, fail_above);
    return s;
}

nlohmann::json compare_summary_json(const CompareSummary& s, const HeadComparison& c, const std::vector<double>& metric,
                                    const std::vector<double>& top1) {
    const int64_t largest = s.ranked.empty() ? -1 : s.ranked.front();
    nlohmann::json labels = nlohmann::json::array(), ranked = nlohmann::json::array(),
                   failing = nlohmann::json::array();
    for (int64_t n : s.label_changes)
        labels.push_back({{"head", tag(c, n)},
                          {"label_a", c.first.labels[static_cast<size_t>(n)]},
                          {"label_b", c.second.labels[static_cast<size_t>(n)]}});
    for (int64_t n : s.ranked) ranked.push_back(head_entry(c, n, metric[static_cast<size_t>(n)]));
    for (int64_t n : s.failing) failing.push_back(tag(c, n));
    const bool defined = largest >= 0 && !std::isnan(metric[static_cast<size_t>(largest)]);
    return {
        {"metric", s.metric},
        {"num_heads", metric.size()},
        {"largest", defined ? head_entry(c, largest, metric[static_cast<size_t>(largest)]) : nlohmann::json()},
        {"label_changes", std::move(labels)},
        {"lowest_top1_agreement",
         s.lowest_top1 < 0 ? nlohmann::json() : head_entry(c, s.lowest_top1, top1[static_cast<size_t>(s.lowest_top1)])},
        {"fail_above", s.fail_above < 0 ? nlohmann::json() : nlohmann::json(s.fail_above)},
        {"heads_above", s.fail_above < 0 ? nlohmann::json() : nlohmann::json(std::move(failing))},
        {"ranked", std::move(ranked)}};
}

std::string compare_summary_text(const CompareSummary& s, const HeadComparison& c, const std::vector<double>& metric,
                                 const std::vector<double>& top1) {
    const size_t heads = metric.size();
    std::string out = fmt::format("summary: {}{} compared\n", heads, heads == 1 ? " head" : " heads");
    const int64_t largest = s.ranked.empty() ? -1 : s.ranked.front();
    if (largest >= 0 && !std::isnan(metric[static_cast<size_t>(largest)]))
        out += fmt::format("  largest change: {}, {} {}\n", tag(c, largest), s.metric,
                           number(metric[static_cast<size_t>(largest)]));
    else
        out += fmt::format("  largest change: none measurable ({} is undefined for every head)\n", s.metric);
    out += "  labels changed: ";
    if (s.label_changes.empty()) out += "none";
    for (size_t i = 0; i < s.label_changes.size(); ++i) {
        const int64_t n = s.label_changes[i];
        out +=
            fmt::format("{}{} {} -> {}", i ? ", " : "", tag(c, n), shown_label(c.first, n), shown_label(c.second, n));
    }
    out += "\n";
    // As model says it: on an input too short to tell, a label (and so a change of label) is a guess.
    if (too_short_to_label(c.first))
        out += fmt::format("  {}\n", too_short_sentence(c.first, "the labels and their changes"));
    if (s.lowest_top1 >= 0)
        out += fmt::format("  lowest top-1 agreement: {}, {}\n", tag(c, s.lowest_top1),
                           number(top1[static_cast<size_t>(s.lowest_top1)]));
    if (s.fail_above >= 0) {
        out += fmt::format("  limit {} on {}: {} of {} heads above{}", number(s.fail_above), s.metric, s.failing.size(),
                           heads, s.failing.empty() ? "" : ":");
        for (int64_t n : s.failing) out += fmt::format(" {}", tag(c, n));
        out += "\n";
    }
    return out;
}

}  // namespace attn_viz
