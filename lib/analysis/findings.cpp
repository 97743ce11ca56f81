// Findings in words from an analysis (see findings.hpp).
#include "findings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "stats_report.hpp"

namespace attn_viz {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t max_heads_named = 10;  // a sentence names at most this many heads, then "and N more"

// A kind of head the findings look for: heads whose `member` reaches the threshold.
struct HeadKind {
    const char* kind;
    const char* statistic;
    double HeadStats::*member;
    double LabelThresholds::*threshold;
};

// Duplicate-token heads share the induction threshold (both scores are attention mass on target
// positions); stats.json's thresholds stay the ones labels use.
const std::vector<HeadKind>& head_kinds() {
    static const std::vector<HeadKind> kinds = {
        {"previous-token", "previous_token_mass", &HeadStats::previous_token_mass, &LabelThresholds::previous_token},
        {"next-token", "next_token_mass", &HeadStats::next_token_mass, &LabelThresholds::next_token},
        {"self", "self_mass", &HeadStats::self_mass, &LabelThresholds::self},
        {"sink", "first_token_mass", &HeadStats::first_token_mass, &LabelThresholds::sink},
        {"induction", "induction", &HeadStats::induction, &LabelThresholds::induction},
        {"duplicate-token", "duplicate_token", &HeadStats::duplicate_token, &LabelThresholds::induction},
        {"diffuse", "normalized_entropy", &HeadStats::normalized_entropy, &LabelThresholds::diffuse},
    };
    return kinds;
}

std::string number(double x) {
    char text[32];
    std::snprintf(text, sizeof text, std::abs(x) >= 0.01 || x == 0 ? "%.2f" : "%.3g", x);
    return text;
}

// "L0H4 (0.98), L1H2 (0.75)": heads with their scores, at most max_heads_named of them.
std::string head_list(const ModelAnalysis& a, const std::vector<int64_t>& heads, const std::vector<double>& scores) {
    std::string text;
    for (size_t n = 0; n < heads.size() && n < max_heads_named; ++n) {
        if (n > 0) text += n + 1 == heads.size() ? " and " : ", ";
        text += head_tag(a.head_ids[static_cast<size_t>(heads[n])]) + " (" + number(scores[n]) + ")";
    }
    if (heads.size() > max_heads_named) text += " and " + std::to_string(heads.size() - max_heads_named) + " more";
    return text;
}

Finding head_kind_finding(const ModelAnalysis& a, const HeadKind& k) {
    Finding f;
    f.kind = k.kind;
    f.statistic = k.statistic;
    f.threshold = a.thresholds.*k.threshold;
    // Every head with a defined score, strongest first (stable: ties keep head order).
    std::vector<int64_t> order;
    for (size_t n = 0; n < a.heads.size(); ++n)
        if (std::isfinite(a.heads[n].*k.member)) order.push_back(static_cast<int64_t>(n));
    const auto score_of = [&](int64_t n) { return a.heads[static_cast<size_t>(n)].*k.member; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return score_of(x) > score_of(y); });
    const std::string plural = std::string(k.kind) + " heads";
    if (order.empty()) {
        f.score = nan;
        f.sentence = "no " + plural + " measured: " + k.statistic + " is undefined for every head" +
                     (f.kind == "induction" || f.kind == "duplicate-token"
                          ? " (no token repeats in the input; a text repeated twice has repeats)"
                          : "");
        return f;
    }
    for (int64_t n : order)
        if (score_of(n) >= f.threshold) f.heads.push_back(n), f.scores.push_back(score_of(n));
    f.found = !f.heads.empty();
    const std::string rule = std::string(k.statistic) + " >= " + number(f.threshold);
    if (f.found) {
        f.score = f.scores.front();
        f.sentence = (f.heads.size() == 1 ? std::string(k.kind) + " head (" : plural + " (") + rule + "): " +
                     head_list(a, f.heads, f.scores);
    } else {
        f.heads = {order.front()}, f.scores = {score_of(order.front())};
        f.score = f.scores.front();
        f.sentence = "no " + std::string(k.kind) + " head: the best is " + head_tag(a.head_ids[static_cast<size_t>(order.front())]) +
                     " with " + number(f.score) + ", threshold " + number(f.threshold) + " (" + k.statistic + ")";
    }
    return f;
}

// One finding per redundant group, or one saying there is none (with the closest pair).
std::vector<Finding> redundancy_findings(const ModelAnalysis& a) {
    const HeadMatrix& js = a.matrix(PairMetric::js_distance);
    const double cut = a.thresholds.redundancy_js;
    std::vector<Finding> found;
    for (const auto& group : a.redundant_groups) {
        Finding f{"redundant", true, group, {}, "js_distance", 0, cut, false, ""};
        for (size_t x = 0; x < group.size(); ++x)
            for (size_t y = x + 1; y < group.size(); ++y) f.score = std::max(f.score, js.at(group[x], group[y]));
        f.scores.assign(group.size(), f.score);
        std::string names;
        for (size_t n = 0; n < group.size(); ++n)
            names += (n == 0 ? "" : n + 1 == group.size() ? " and " : ", ") + head_tag(a.head_ids[static_cast<size_t>(group[n])]);
        f.sentence = "redundant: " + names + " attend alike (JS distance at most " + number(f.score) + ", cut " + number(cut) + ")";
        found.push_back(std::move(f));
    }
    if (!found.empty() || a.heads.size() < 2) return found;
    Finding none{"redundant", false, {}, {}, "js_distance", nan, cut, false, "no redundant heads"};
    if (!a.redundant_pairs.empty() && std::isfinite(js.at(a.redundant_pairs[0].first, a.redundant_pairs[0].second))) {
        const auto [x, y] = a.redundant_pairs[0];
        none.heads = {x, y};
        none.score = js.at(x, y);
        none.scores = {none.score, none.score};
        none.sentence += ": the closest pair is " + head_tag(a.head_ids[static_cast<size_t>(x)]) + " and " +
                         head_tag(a.head_ids[static_cast<size_t>(y)]) + " with JS distance " + number(none.score) + ", cut " +
                         number(cut);
    }
    found.push_back(std::move(none));
    return found;
}

}  // namespace

std::string head_tag(const HeadId& id) {
    std::string tag;  // appended piece by piece: "L" + std::to_string(...) trips GCC 12's -Wrestrict
    return tag.append("L").append(std::to_string(id.layer)).append("H").append(std::to_string(id.head));
}

namespace {

double tokens_per_sequence(const ModelAnalysis& a) {
    return static_cast<double>(a.total_queries) / static_cast<double>(std::max<int64_t>(a.num_sequences, 1));
}

}  // namespace

bool too_short_to_label(const ModelAnalysis& a) { return tokens_per_sequence(a) < static_cast<double>(min_tokens_to_label); }

std::vector<Finding> find_findings(const ModelAnalysis& a) {
    std::vector<Finding> findings;
    const double tokens = tokens_per_sequence(a);
    if (too_short_to_label(a)) {
        Finding f{"too-short", false, {}, {}, "", tokens, static_cast<double>(min_tokens_to_label), true, ""};
        char count[32];
        std::snprintf(count, sizeof count, "%.3g", tokens);
        f.sentence = "too short to tell: the input has " + std::string(count) + (a.num_sequences > 1 ? " tokens per sequence" : " tokens") +
                     ", labelling heads needs at least " + std::to_string(min_tokens_to_label) +
                     " (evenly spread attention alone reaches the thresholds); the labels are guesses";
        findings.push_back(std::move(f));
    } else {
        for (const HeadKind& kind : head_kinds()) {
            Finding f = head_kind_finding(a, kind);
            // Under a causal mask no query sees its next token: saying so for every run is noise.
            if (!(a.causal && f.kind == "next-token" && f.heads.empty())) findings.push_back(std::move(f));
        }
    }
    for (Finding& f : redundancy_findings(a)) findings.push_back(std::move(f));
    return findings;
}

nlohmann::json findings_json(const ModelAnalysis& a, const std::vector<Finding>& findings) {
    nlohmann::json list = nlohmann::json::array();
    for (const Finding& f : findings) {
        nlohmann::json heads = nlohmann::json::array();
        for (size_t n = 0; n < f.heads.size(); ++n) {
            const HeadId& id = a.head_ids[static_cast<size_t>(f.heads[n])];
            heads.push_back({{"index", f.heads[n]}, {"layer", id.layer}, {"head", id.head}, {"score", json_number(f.scores[n])}});
        }
        list.push_back({{"kind", f.kind}, {"found", f.found}, {"heads", std::move(heads)}, {"statistic", f.statistic},
                        {"score", json_number(f.score)}, {"threshold", json_number(f.threshold)},
                        {"higher_is_stronger", f.higher_is_stronger}, {"sentence", f.sentence}});
    }
    return list;
}

std::string findings_text(const std::vector<Finding>& findings) {
    std::string text = "findings:\n";
    for (const Finding& f : findings) text += "  " + f.sentence + "\n";
    return text;
}

}  // namespace attn_viz
