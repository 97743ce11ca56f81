#include "composition_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "figure_matrix.hpp"
#include "file_write.hpp"
#include "head_effect_outputs.hpp"
#include "head_names.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

constexpr CompositionKind kinds[] = {CompositionKind::q, CompositionKind::k, CompositionKind::v};
constexpr size_t top_pairs_listed = 10;

std::string kind_title(CompositionKind kind) {
    return kind == CompositionKind::q ? "Q" : kind == CompositionKind::k ? "K" : "V";
}

std::string pair_name(const CompositionScores& s, const ComposedPair& p) {
    return fmt::format("{} -> {}", head_name(p.earlier / s.heads, p.earlier % s.heads),
                       head_name(p.later / s.heads, p.later % s.heads));
}

// composition_<kind>.png: the scores on the diverging map centred on the chance level, so that
// pairs random weights would match are white, stronger ones red and weaker ones blue; the chance
// level is a labelled tick and in the title. pairs: the kind's pairs (not empty).
void write_composition_png(OutputDir& out, const CompositionScores& s, CompositionKind kind,
                           const std::vector<ComposedPair>& pairs, const std::vector<std::string>& names,
                           const ReportOptions& o) {
    double reach = 1e-12;  // the largest distance of a score from the chance level
    for (const ComposedPair& p : pairs) reach = std::max(reach, std::abs(p.score - s.chance));
    const std::string chance = short_number(s.chance, "{:.3f}");
    write_matrix_png(out.file(fmt::format("composition_{}.png", composition_kind_name(kind))), s.of(kind), names,
                     fmt::format("{}-composition (row: earlier head, column: later head); white: chance {}, what "
                                 "random weights score",
                                 kind_title(kind), chance),
                     diverging_colormap, static_cast<float>(s.chance - reach), static_cast<float>(s.chance + reach),
                     "composition score", o.style.max_px, s.heads, ReferenceTick{s.chance, "chance " + chance});
}

double mean_score(const std::vector<ComposedPair>& pairs) {
    double sum = 0;
    for (const ComposedPair& p : pairs) sum += p.score;
    return pairs.empty() ? NAN : sum / static_cast<double>(pairs.size());
}

}  // namespace

std::vector<ComposedPair> ranked_compositions(const CompositionScores& s, CompositionKind kind) {
    const Tensor& m = s.of(kind);
    const int64_t N = s.layers * s.heads;
    std::vector<ComposedPair> pairs;
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = 0; b < N; ++b)
            if (std::isfinite(m.data[a * N + b])) pairs.push_back({a, b, m.data[a * N + b]});
    std::stable_sort(pairs.begin(), pairs.end(),
                     [](const ComposedPair& x, const ComposedPair& y) { return x.score > y.score; });
    return pairs;
}

std::vector<std::string> composition_findings(const CompositionScores& s) {
    std::vector<std::string> findings;
    for (CompositionKind kind : kinds) {
        const std::vector<ComposedPair> pairs = ranked_compositions(s, kind);
        if (pairs.empty()) continue;
        findings.push_back(fmt::format(
            "{}-composition: strongest {} ({}, against a mean of {} over {} pairs; random weights score {})",
            kind_title(kind), pair_name(s, pairs.front()), short_number(pairs.front().score, "{:.3f}"),
            short_number(mean_score(pairs), "{:.3f}"), pairs.size(), short_number(s.chance, "{:.3f}")));
    }
    return findings;
}

nlohmann::json write_composition_outputs(OutputDir& out, const CompositionScores& s, const std::string& norm_folding,
                                         const ReportOptions& o) {
    std::string csv = "kind,earlier_layer,earlier_head,later_layer,later_head,score\n";
    nlohmann::json stats = {{"norm_folding", norm_folding}};
    std::vector<std::string> names;
    for (int64_t n = 0; n < s.layers * s.heads; ++n) names.push_back(head_name(n / s.heads, n % s.heads));
    for (CompositionKind kind : kinds) {
        const std::string key = composition_kind_name(kind);
        const std::vector<ComposedPair> pairs = ranked_compositions(s, kind);
        nlohmann::json top = nlohmann::json::array();
        for (const ComposedPair& p : pairs) {
            const std::string row = fmt::format("{},{},{},{},{},", key, p.earlier / s.heads, p.earlier % s.heads,
                                                p.later / s.heads, p.later % s.heads);
            csv += row + csv_number(p.score) + "\n";
            if (top.size() < top_pairs_listed)
                top.push_back({{"earlier_layer", p.earlier / s.heads},
                               {"earlier_head", p.earlier % s.heads},
                               {"later_layer", p.later / s.heads},
                               {"later_head", p.later % s.heads},
                               {"score", json_number(p.score)}});
        }
        stats[key] = {{"mean", json_number(mean_score(pairs))}, {"chance", json_number(s.chance)}, {"top", top}};
        if (o.pictures && !pairs.empty()) write_composition_png(out, s, kind, pairs, names, o);
    }
    write_file_bytes(out.file("composition.csv"), csv);
    stats["findings"] = composition_findings(s);
    return {{"composition", stats}};
}

}  // namespace attn_viz
