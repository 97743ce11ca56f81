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
            {"redundancy_output_cosine", &LabelThresholds::redundancy_output_cosine},
            {"sep", &LabelThresholds::sep},
            {"delimiter", &LabelThresholds::delimiter},
            {"broad", &LabelThresholds::broad}};
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

namespace {

// The mass on delimiters, [SEP]s and punctuation together: a role no token has adds nothing; NaN
// when neither is defined.
double delimiter_mass(const HeadStats& s) {
    if (std::isnan(s.sep_mass)) return s.punctuation_mass;
    return std::isnan(s.punctuation_mass) ? s.sep_mass : s.sep_mass + s.punctuation_mass;
}

// The rules of label_head in their order, each with the head's score; `local` is the one rule met
// at or below its threshold. Comparisons with NaN are false, so an undefined statistic never
// selects its label.
std::vector<NearestPattern> label_rules(const HeadStats& s, const LabelThresholds& t, const LabelContext& c) {
    std::vector<NearestPattern> rules = {
        {"induction", "induction", s.induction, t.induction},
        {"previous-token", "previous_token_mass", s.previous_token_mass, t.previous_token},
        {"next-token", "next_token_mass", s.next_token_mass, t.next_token},
        {"self", "self_mass", s.self_mass, t.self},
    };
    if (c.encoder) {
        rules.push_back({"[SEP]", "sep_mass", s.sep_mass, t.sep});
        rules.push_back({"delimiter", "sep_mass+punctuation_mass", delimiter_mass(s), t.delimiter});
        rules.push_back({"[CLS]", "cls_mass", s.cls_mass, t.sink});
    }
    rules.push_back({"sink", "first_token_mass", s.first_token_mass, t.sink});
    rules.push_back(c.encoder ? NearestPattern{"broad", "normalized_entropy", s.normalized_entropy, t.broad}
                              : NearestPattern{"diffuse", "normalized_entropy", s.normalized_entropy, t.diffuse});
    rules.push_back({"local", "mean_distance", s.mean_distance, t.local_distance});
    return rules;
}

bool is_local_rule(const NearestPattern& rule) { return std::string(rule.label) == "local"; }

}  // namespace

std::string label_head(const HeadStats& s, const LabelThresholds& t, const LabelContext& c) {
    for (const NearestPattern& rule : label_rules(s, t, c))
        if (is_local_rule(rule) ? rule.score <= rule.threshold : rule.score >= rule.threshold) return rule.label;
    return "mixed";
}

NearestPattern nearest_pattern(const HeadStats& s, const LabelThresholds& t, const LabelContext& c) {
    // How far each rule's statistic got towards its threshold (local: lower is nearer).
    NearestPattern nearest;
    double best = -1;
    for (const NearestPattern& rule : label_rules(s, t, c)) {
        if (!std::isfinite(rule.score) || !(rule.threshold > 0)) continue;
        const bool local = is_local_rule(rule);
        const double reached =
            local ? (rule.score > 0 ? rule.threshold / rule.score : 1.0) : rule.score / rule.threshold;
        if (reached > best) best = reached, nearest = rule;
    }
    return nearest;
}

}  // namespace attn_viz
