// Findings in words from an analysis (see findings.hpp).
#include "findings.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "head_names.hpp"
#include "stats_report.hpp"

namespace attn_viz {

std::string head_tag(const HeadId& id) { return head_name(id.layer, id.head); }

PairEvidence pair_evidence(const ModelAnalysis& a, int64_t x, int64_t y) {
    const LabelThresholds& t = a.thresholds;
    PairEvidence e;
    e.attend_alike = a.matrix(PairMetric::js_distance).at(x, y) <= t.redundancy_js;
    e.same_layer = a.head_ids[static_cast<size_t>(x)].layer == a.head_ids[static_cast<size_t>(y)].layer;
    e.both_sinks = a.heads[static_cast<size_t>(x)].first_token_mass >= t.sink &&
                   a.heads[static_cast<size_t>(y)].first_token_mass >= t.sink;
    e.output_cosine = a.matrix(PairMetric::output_cosine).at(x, y);
    e.redundant = e.attend_alike && e.same_layer && !e.both_sinks && e.output_cosine >= t.redundancy_output_cosine;
    return e;
}

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr size_t max_heads_named = 10;  // a sentence names at most this many heads, then "and N more"

// A kind of head the findings look for: heads whose `member` reaches the threshold; `note` ends
// the sentence that names them.
struct HeadKind {
    const char* kind;
    const char* statistic;
    double HeadStats::*member;
    double LabelThresholds::*threshold;
    const char* note = "";
};

// Duplicate-token heads share the induction threshold (both scores are attention mass on target
// positions); stats.json's thresholds stay the ones labels use. An encoder's (label_context) are
// Clark et al. 2019's: [SEP] heads, [CLS] heads where a decoder has sink heads, broad for diffuse.
std::vector<HeadKind> head_kinds(const LabelContext& context) {
    std::vector<HeadKind> kinds = {
        {"previous-token", "previous_token_mass", &HeadStats::previous_token_mass, &LabelThresholds::previous_token},
        {"next-token", "next_token_mass", &HeadStats::next_token_mass, &LabelThresholds::next_token},
        {"self", "self_mass", &HeadStats::self_mass, &LabelThresholds::self},
    };
    if (context.encoder) {
        kinds.push_back({"[SEP]", "sep_mass", &HeadStats::sep_mass, &LabelThresholds::sep});
        kinds.push_back({"[CLS]", "cls_mass", &HeadStats::cls_mass, &LabelThresholds::sink,
                         " (an encoder's sink heads: they park their weight on [CLS] as a decoder's sink heads do on "
                         "its first token)"});
    } else {
        kinds.push_back({"sink", "first_token_mass", &HeadStats::first_token_mass, &LabelThresholds::sink});
    }
    kinds.push_back({"induction", "induction", &HeadStats::induction, &LabelThresholds::induction});
    kinds.push_back({"duplicate-token", "duplicate_token", &HeadStats::duplicate_token, &LabelThresholds::induction});
    kinds.push_back(
        context.encoder
            ? HeadKind{"broad", "normalized_entropy", &HeadStats::normalized_entropy, &LabelThresholds::broad}
            : HeadKind{"diffuse", "normalized_entropy", &HeadStats::normalized_entropy, &LabelThresholds::diffuse});
    return kinds;
}

std::string number(double x) {
    return std::abs(x) >= 0.01 || x == 0 ? fmt::format("{:.2f}", x) : fmt::format("{:.3g}", x);
}

// "L0H4 (0.98), L1H2 (0.75)": heads with their scores, at most max_heads_named of them.
std::string head_list(const ModelAnalysis& a, const std::vector<int64_t>& heads, const std::vector<double>& scores) {
    std::string text;
    for (size_t n = 0; n < heads.size() && n < max_heads_named; ++n) {
        if (n > 0) text += n + 1 == heads.size() ? " and " : ", ";
        text += fmt::format("{} ({})", head_tag(a.head_ids[static_cast<size_t>(heads[n])]), number(scores[n]));
    }
    if (heads.size() > max_heads_named) text += fmt::format(" and {} more", heads.size() - max_heads_named);
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
    const std::string singular = fmt::format("{} head", k.kind), plural = fmt::format("{} heads", k.kind);
    if (order.empty()) {
        f.score = nan;
        f.sentence = fmt::format("no {} measured: {} is undefined for every head{}", plural, k.statistic,
                                 f.kind == "induction" || f.kind == "duplicate-token"
                                     ? " (no token repeats in the input; a text repeated twice has repeats)"
                                     : "");
        return f;
    }
    for (int64_t n : order)
        if (score_of(n) >= f.threshold) f.heads.push_back(n), f.scores.push_back(score_of(n));
    f.found = !f.heads.empty();
    const std::string rule = fmt::format("{} >= {}", k.statistic, number(f.threshold));
    if (f.found) {
        f.score = f.scores.front();
        f.sentence = fmt::format("{} ({}): {}{}", f.heads.size() == 1 ? singular : plural, rule,
                                 head_list(a, f.heads, f.scores), k.note);
    } else {
        f.heads = {order.front()}, f.scores = {score_of(order.front())};
        f.score = f.scores.front();
        f.sentence = fmt::format("no {}: the best is {} with {}, threshold {} ({})", singular,
                                 head_tag(a.head_ids[static_cast<size_t>(order.front())]), number(f.score),
                                 number(f.threshold), k.statistic);
    }
    return f;
}

// With --sparse-error: how many keys a typical head needs (top-k, and sink + window) for the
// output error tolerance, and the most demanding head; none without the measurement.
std::vector<Finding> sparse_findings(const ModelAnalysis& a) {
    std::vector<int64_t> measured;
    for (size_t n = 0; n < a.heads.size(); ++n)
        if (std::isfinite(a.heads[n].keys_needed)) measured.push_back(static_cast<int64_t>(n));
    if (measured.empty()) return {};
    const auto median = [&](double HeadStats::*member) {
        std::vector<double> values;
        for (int64_t n : measured)
            if (std::isfinite(a.heads[static_cast<size_t>(n)].*member))
                values.push_back(a.heads[static_cast<size_t>(n)].*member);
        if (values.empty()) return nan;
        std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
        return values[values.size() / 2];
    };
    const int64_t most = *std::max_element(measured.begin(), measured.end(), [&](int64_t x, int64_t y) {
        return a.heads[static_cast<size_t>(x)].keys_needed < a.heads[static_cast<size_t>(y)].keys_needed;
    });
    const double tolerance = a.thresholds.sparse_tolerance;
    Finding f{"sparse-error",
              true,
              {most},
              {a.heads[static_cast<size_t>(most)].keys_needed},
              "keys_needed",
              a.heads[static_cast<size_t>(most)].keys_needed,
              tolerance,
              false,
              ""};
    const double window = median(&HeadStats::window_needed);
    const auto count = [](double x) { return fmt::format("{:.4g}", x); };  // key counts: whole, or corpus means
    f.sentence = fmt::format(
        "sparse attention (output error <= {}%): the median head needs its top {} of {} keys{}; the most demanding, "
        "{}, needs {}",
        count(100 * tolerance), count(median(&HeadStats::keys_needed)), a.num_keys,
        std::isfinite(window) ? fmt::format(" or a sink + window of {}", count(window)) : "",
        head_tag(a.head_ids[static_cast<size_t>(most)]), count(f.score));
    return {f};
}

// "L0H4 and L0H5", "L0H1, L0H2 and L0H3".
std::string head_names_text(const ModelAnalysis& a, const std::vector<int64_t>& heads) {
    std::string names;
    for (size_t n = 0; n < heads.size(); ++n)
        names += (n == 0                  ? ""
                  : n + 1 == heads.size() ? " and "
                                          : ", ") +
                 head_tag(a.head_ids[static_cast<size_t>(heads[n])]);
    return names;
}

// What a group that attends alike shows, over all its pairs.
struct GroupEvidence {
    std::vector<int64_t> sinks;       // its sink heads: any two of them are alike through the first token
    bool other_layers = false;        // some pair in different layers: no output compared
    bool uncompared = false;          // some pair in one layer without an output cosine
    double lowest_cosine = INFINITY;  // of the pairs compared
    double lowest_sink_mass = INFINITY;
    bool redundant = false;  // no two sink heads, one layer, every output cosine at least the cut
};

GroupEvidence group_evidence(const ModelAnalysis& a, const std::vector<int64_t>& group) {
    GroupEvidence g;
    for (size_t x = 0; x < group.size(); ++x) {
        const double mass = a.heads[static_cast<size_t>(group[x])].first_token_mass;
        if (mass >= a.thresholds.sink)
            g.sinks.push_back(group[x]), g.lowest_sink_mass = std::min(g.lowest_sink_mass, mass);
        for (size_t y = x + 1; y < group.size(); ++y) {
            const PairEvidence e = pair_evidence(a, group[x], group[y]);
            g.other_layers |= !e.same_layer;
            g.uncompared |= e.same_layer && std::isnan(e.output_cosine);
            if (!std::isnan(e.output_cosine)) g.lowest_cosine = std::min(g.lowest_cosine, e.output_cosine);
        }
    }
    g.redundant = g.sinks.size() < 2 && !g.other_layers && !g.uncompared &&
                  g.lowest_cosine >= a.thresholds.redundancy_output_cosine;
    return g;
}

// One finding per group of heads that attend alike: "redundant" when its heads also write alike
// (every output cosine, within a layer, at least the cut) and no two are sink heads, otherwise
// "attend-alike" saying why not (sink heads, different layers, outputs not compared or not alike); then, unless a group
// is redundant, one "redundant" finding saying there is none (with the closest pair when no group attends alike). The
// clustering merges groups while their *average* distance is within the cut, so a group's farthest pair may lie beyond
// it: the sentence then says so, naming that pair. On an input too short to tell, groups are guesses, as the labels
// are.
std::vector<Finding> redundancy_findings(const ModelAnalysis& a) {
    const HeadMatrix& js = a.matrix(PairMetric::js_distance);
    const double cut = a.thresholds.redundancy_js, cosine_cut = a.thresholds.redundancy_output_cosine;
    const std::string guess = too_short_to_label(a) ? " (a guess: the input is too short to tell)" : "";
    std::vector<Finding> found;
    bool any_redundant = false;
    for (const auto& group : a.redundant_groups) {
        Finding f{"redundant", true, group, {}, "js_distance", 0, cut, false, ""};
        double sum = 0;
        int64_t pairs = 0;
        std::pair<int64_t, int64_t> farthest{group[0], group[1]};
        for (size_t x = 0; x < group.size(); ++x)
            for (size_t y = x + 1; y < group.size(); ++y) {
                const double d = js.at(group[x], group[y]);
                sum += d, ++pairs;
                if (d > f.score) f.score = d, farthest = {group[x], group[y]};
            }
        f.scores.assign(group.size(), f.score);
        std::string distance;
        if (f.score <= cut) {
            distance = fmt::format("JS distance at most {}, cut {}", number(f.score), number(cut));
        } else {
            distance = fmt::format("mean JS distance {} within the cut {}; the farthest pair, {}, is {} apart",
                                   number(sum / static_cast<double>(pairs)), number(cut),
                                   head_names_text(a, {farthest.first, farthest.second}), number(f.score));
        }
        const std::string names = head_names_text(a, group);
        const GroupEvidence g = group_evidence(a, group);
        any_redundant |= g.redundant;
        if (!g.redundant) f.kind = "attend-alike";
        if (g.redundant)
            f.sentence =
                fmt::format("redundant: {} attend alike and write alike ({}; output cosine at least {}, cut {}){}",
                            names, distance, number(g.lowest_cosine), number(cosine_cut), guess);
        else if (g.sinks.size() >= 2)
            f.sentence = fmt::format(
                "attend alike: {} ({}); {} sink heads (first_token_mass at least {}, threshold {}), alike through the "
                "first token alone, not duplicates{}",
                names, distance,
                g.sinks.size() < group.size() ? head_names_text(a, g.sinks) + " are"
                : group.size() == 2           ? std::string("both are")
                                              : std::string("all are"),
                number(g.lowest_sink_mass), number(a.thresholds.sink), guess);
        else if (g.other_layers)
            f.sentence = fmt::format(
                "attend alike: {} ({}); in different layers, whose outputs are not compared, so not shown redundant{}",
                names, distance, guess);
        else if (g.uncompared)
            f.sentence = fmt::format("attend alike: {} ({}); their outputs were not compared, so not shown redundant{}",
                                     names, distance, guess);
        else
            f.sentence = fmt::format("attend alike: {} ({}), but write differently (output cosine {}, cut {}){}", names,
                                     distance, number(g.lowest_cosine), number(cosine_cut), guess);
        found.push_back(std::move(f));
    }
    if (any_redundant || a.heads.size() < 2) return found;
    Finding none{"redundant", false, {}, {}, "js_distance", nan, cut, false, "no redundant heads"};
    if (!found.empty()) {
        none.sentence += ": no heads that attend alike are shown to write alike";
    } else if (!a.redundant_pairs.empty() &&
               std::isfinite(js.at(a.redundant_pairs[0].first, a.redundant_pairs[0].second))) {
        const auto [x, y] = a.redundant_pairs[0];
        none.heads = {x, y};
        none.score = js.at(x, y);
        none.scores = {none.score, none.score};
        none.sentence += fmt::format(": the closest pair is {} with JS distance {}, cut {}", head_names_text(a, {x, y}),
                                     number(none.score), number(cut));
    }
    found.push_back(std::move(none));
    return found;
}

// The heads labelled "mixed" (no rule holds), each with the pattern it comes nearest to; none
// when no head is mixed.
std::vector<Finding> mixed_findings(const ModelAnalysis& a) {
    Finding f{"mixed", true, {}, {}, "", nan, nan, true, ""};
    std::string list;
    for (size_t n = 0; n < a.heads.size(); ++n) {
        if (a.labels[n] != "mixed") continue;
        const NearestPattern p = nearest_pattern(a.heads[n], a.thresholds, label_context(a));
        f.heads.push_back(static_cast<int64_t>(n));
        f.scores.push_back(p.score);
        if (f.heads.size() > max_heads_named) continue;
        list += fmt::format("{}{}", f.heads.size() == 1 ? "" : ", ", head_tag(a.head_ids[n]));
        if (*p.label)
            list += fmt::format(" nearest {} ({} {}{}{})", p.label, p.statistic, number(p.score),
                                std::string(p.label) == "local" ? ", needs <= " : ", needs ", number(p.threshold));
    }
    if (f.heads.empty()) return {};
    if (f.heads.size() > max_heads_named) list += fmt::format(" and {} more", f.heads.size() - max_heads_named);
    f.sentence = fmt::format("{} (no pattern reaches its threshold): {}",
                             f.heads.size() == 1 ? "mixed head" : "mixed heads", list);
    return {f};
}

}  // namespace

std::string group_claim(const ModelAnalysis& a, const std::vector<int64_t>& group) {
    const GroupEvidence g = group_evidence(a, group);
    return g.redundant ? "redundant" : g.sinks.size() >= 2 ? "attend alike (sink heads)" : "attend alike";
}

namespace {

double tokens_per_sequence(const ModelAnalysis& a) {
    return static_cast<double>(a.total_queries) / static_cast<double>(std::max<int64_t>(a.num_sequences, 1));
}

}  // namespace

bool too_short_to_label(const ModelAnalysis& a) {
    return tokens_per_sequence(a) < static_cast<double>(min_tokens_to_label);
}

std::string too_short_sentence(const ModelAnalysis& a, const std::string& guesses) {
    return fmt::format(
        "too short to tell: the input has {:.3g}{}, labelling heads needs at least {} (evenly spread attention alone "
        "reaches the thresholds, and maps this small look alike); {} are guesses",
        tokens_per_sequence(a), a.num_sequences > 1 ? " tokens per sequence" : " tokens", min_tokens_to_label, guesses);
}

std::string shown_label(const ModelAnalysis& a, int64_t n) {
    return fmt::format("{}{}", a.labels[static_cast<size_t>(n)], too_short_to_label(a) ? "?" : "");
}

std::vector<Finding> find_findings(const ModelAnalysis& a) {
    std::vector<Finding> findings;
    const double tokens = tokens_per_sequence(a);
    if (too_short_to_label(a)) {
        Finding f{"too-short", false, {}, {}, "", tokens, static_cast<double>(min_tokens_to_label), true, ""};
        f.sentence = too_short_sentence(a, "the labels and redundant groups");
        findings.push_back(std::move(f));
    } else {
        for (const HeadKind& kind : head_kinds(label_context(a))) {
            Finding f = head_kind_finding(a, kind);
            // Under a causal mask no query sees its next token: saying so for every run is noise.
            if (!(a.causal && f.kind == "next-token" && f.heads.empty())) findings.push_back(std::move(f));
        }
        for (Finding& f : mixed_findings(a)) findings.push_back(std::move(f));
    }
    for (Finding& f : redundancy_findings(a)) findings.push_back(std::move(f));
    for (Finding& f : sparse_findings(a)) findings.push_back(std::move(f));
    return findings;
}

nlohmann::json findings_json(const ModelAnalysis& a, const std::vector<Finding>& findings) {
    nlohmann::json list = nlohmann::json::array();
    for (const Finding& f : findings) {
        nlohmann::json heads = nlohmann::json::array();
        for (size_t n = 0; n < f.heads.size(); ++n) {
            const HeadId& id = a.head_ids[static_cast<size_t>(f.heads[n])];
            heads.push_back(
                {{"index", f.heads[n]}, {"layer", id.layer}, {"head", id.head}, {"score", json_number(f.scores[n])}});
        }
        list.push_back({{"kind", f.kind},
                        {"found", f.found},
                        {"heads", std::move(heads)},
                        {"statistic", f.statistic},
                        {"score", json_number(f.score)},
                        {"threshold", json_number(f.threshold)},
                        {"higher_is_stronger", f.higher_is_stronger},
                        {"sentence", f.sentence}});
    }
    return list;
}

std::string findings_text(const std::vector<Finding>& findings) {
    std::string text = "findings:\n";
    for (const Finding& f : findings) text += fmt::format("  {}\n", f.sentence);
    return text;
}

}  // namespace attn_viz
