#include "head_labels.hpp"

#include <cmath>
#include <cstdlib>
#include <ranges>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

std::vector<std::pair<const char*, double LabelThresholds::*>> threshold_fields() {
    return {{"induction", &LabelThresholds::induction},
            {"previous_token", &LabelThresholds::previous_token},
            {"next_token", &LabelThresholds::next_token},
            {"self", &LabelThresholds::self},
            {"sink", &LabelThresholds::sink},
            {"diffuse", &LabelThresholds::diffuse},
            {"local_distance", &LabelThresholds::local_distance},
            {"redundancy_js", &LabelThresholds::redundancy_js},
            {"top_pairs", &LabelThresholds::top_pairs},
            {"sparse_tolerance", &LabelThresholds::sparse_tolerance},
            {"redundancy_output_cosine", &LabelThresholds::redundancy_output_cosine}};
}

void set_threshold(LabelThresholds& thresholds, const std::string& assignment) {
    const size_t equals = assignment.find('=');
    const std::string name = assignment.substr(0, equals);
    const std::string where = fmt::format("threshold '{}'", assignment);
    if (equals == std::string::npos) throw Error(ErrorKind::usage, fmt::format("{}: expected name=value", where));
    const std::string text = assignment.substr(equals + 1);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value))
        throw Error(ErrorKind::usage, fmt::format("{}: '{}' is not a finite number", where, text));
    for (const auto& [field_name, member] : threshold_fields())
        if (name == field_name) {
            if (name == "top_pairs" && (value < 0 || value != std::floor(value)))
                throw Error(ErrorKind::usage, fmt::format("{}: top_pairs must be a whole number >= 0", where));
            thresholds.*member = value;
            return;
        }
    const auto fields = threshold_fields();
    throw Error(ErrorKind::usage, fmt::format("{}: unknown name '{}' (known: {})", where, name,
                                              fmt::join(fields | std::views::keys, ", ")));
}

std::string label_head(const HeadStats& s, const LabelThresholds& t) {
    // Comparisons with NaN are false, so an undefined statistic never selects its label.
    if (s.induction >= t.induction) return "induction";
    if (s.previous_token_mass >= t.previous_token) return "previous-token";
    if (s.next_token_mass >= t.next_token) return "next-token";
    if (s.self_mass >= t.self) return "self";
    if (s.first_token_mass >= t.sink) return "sink";
    if (s.normalized_entropy >= t.diffuse) return "diffuse";
    if (s.mean_distance <= t.local_distance) return "local";
    return "mixed";
}

NearestPattern nearest_pattern(const HeadStats& s, const LabelThresholds& t) {
    // How far each rule's statistic got towards its threshold (local: lower is nearer).
    const NearestPattern rules[] = {
        {"induction", "induction", s.induction, t.induction},
        {"previous-token", "previous_token_mass", s.previous_token_mass, t.previous_token},
        {"next-token", "next_token_mass", s.next_token_mass, t.next_token},
        {"self", "self_mass", s.self_mass, t.self},
        {"sink", "first_token_mass", s.first_token_mass, t.sink},
        {"diffuse", "normalized_entropy", s.normalized_entropy, t.diffuse},
        {"local", "mean_distance", s.mean_distance, t.local_distance},
    };
    NearestPattern nearest;
    double best = -1;
    for (const NearestPattern& rule : rules) {
        if (!std::isfinite(rule.score) || !(rule.threshold > 0)) continue;
        const bool local = std::string(rule.label) == "local";
        const double reached =
            local ? (rule.score > 0 ? rule.threshold / rule.score : 1.0) : rule.score / rule.threshold;
        if (reached > best) best = reached, nearest = rule;
    }
    return nearest;
}

}  // namespace attn_viz
