#include "patching_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "head_effect_outputs.hpp"
#include "head_names.hpp"
#include "stats_report.hpp"
#include "token_reference.hpp"

namespace attn_viz {
namespace {

// The metric in words, for titles and findings: "logit(token 262 ' ball') - logit(token 300 ' dog') at the last
// position".
std::string metric_words(const PatchMetric& metric) {
    if (metric.kind == PatchMetric::Kind::loss) return "the clean next-token loss";
    return fmt::format("logit({}) - logit({}) at the last position", token_words(metric.correct, metric.correct_label),
                       token_words(metric.wrong, metric.wrong_label));
}

// stats.json's "metric" (the ids, as --patch-metric takes them) and, for a logit difference whose
// tokens' texts are known, "metric_tokens": the two texts.
nlohmann::json metric_entries(const PatchMetric& metric) {
    nlohmann::json entries = {{"metric", patch_metric_name(metric)}};
    if (metric.kind == PatchMetric::Kind::logit_diff && !metric.correct_label.empty())
        entries["metric_tokens"] = {metric.correct_label, metric.wrong_label};
    return entries;
}

}  // namespace

std::vector<HeadPatchEffect> ranked_patches(const PatchingReport& report) {
    std::vector<HeadPatchEffect> ranked = report.heads;
    const auto key = [](double x) { return std::isfinite(x) ? std::abs(x) : -INFINITY; };
    std::stable_sort(ranked.begin(), ranked.end(), [&](const HeadPatchEffect& a, const HeadPatchEffect& b) {
        if (key(a.delta) != key(b.delta)) return key(a.delta) > key(b.delta);
        if (a.kl != b.kl) return a.kl > b.kl;
        return a.id.layer != b.id.layer ? a.id.layer < b.id.layer : a.id.head < b.id.head;
    });
    return ranked;
}

std::vector<std::string> patching_findings(const PatchingReport& report, const std::vector<HeadPatchEffect>& ranked) {
    if (ranked.empty()) return {};
    const std::string name = fmt::format("activation patching ({})", patch_metric_name(report.metric));
    const HeadPatchEffect& most_kl =
        *std::max_element(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.kl < b.kl; });
    const std::string kl_sentence = fmt::format("the largest change of the predictions is {}'s (KL {} nats)",
                                                head_name(most_kl.id.layer, most_kl.id.head), short_number(most_kl.kl));
    const HeadPatchEffect& top = ranked.front();
    if (!std::isfinite(top.delta)) return {fmt::format("{}: one token has no next-token loss; {}", name, kl_sentence)};
    const double effect = report.corrupted - report.clean;
    const std::string share = std::isfinite(top.fraction) ? fmt::format("; {}% of the corrupted run's change",
                                                                        short_number(100 * top.fraction, "{:.1f}"))
                                                          : "";
    std::vector<std::string> findings = {fmt::format(
        "{}: patching {} from the corrupted input moves {} most, by {} (clean {}, corrupted {}{})", name,
        head_name(top.id.layer, top.id.head), metric_words(report.metric), short_number(top.delta, "{:+.4g}"),
        short_number(report.clean), short_number(report.corrupted), share)};
    const auto carrying = std::count_if(ranked.begin(), ranked.end(), [&](const HeadPatchEffect& e) {
        return std::isfinite(e.fraction) && e.fraction > 0.1;
    });
    findings.push_back(
        effect == 0 ? fmt::format("the corrupted input does not change the metric; {}", kl_sentence)
                    : fmt::format("{} of {} heads alone carry more than 10% of the corrupted run's change ({}); {}",
                                  carrying, ranked.size(), short_number(effect, "{:+.4g}"), kl_sentence));
    return findings;
}

namespace {

// patching_delta.png and patching_kl.png (layers x heads) of `rows` (values: delta first, KL at
// `kl_value`), unless --stats-only; `over` ends both titles (" over 12 pairs" or "").
void write_patching_pictures(OutputDir& out, const std::vector<RankedHeadRow>& rows, size_t kl_value,
                             const PatchMetric& metric, int64_t layers, int64_t heads, const std::string& over,
                             const ReportOptions& o) {
    if (!o.pictures) return;
    write_layer_head_png(
        out.file("patching_delta.png"), layer_head_values(rows, 0, layers, heads), layers, heads,
        fmt::format("Change of {} when a head is patched from the corrupted input{}", metric_words(metric), over),
        "change", o, true);
    write_layer_head_png(out.file("patching_kl.png"), layer_head_values(rows, kl_value, layers, heads), layers, heads,
                         fmt::format("KL(clean || patched) of next-token distributions{}", over), "mean KL (nats)", o);
}

}  // namespace

nlohmann::json write_patching_outputs(OutputDir& out, const PatchingReport& report, int64_t layers, int64_t heads,
                                      const std::vector<std::string>& corrupted_tokens, const ReportOptions& o) {
    const std::vector<HeadPatchEffect> ranked = ranked_patches(report);
    std::vector<RankedHeadRow> rows;
    for (const HeadPatchEffect& e : ranked)
        rows.push_back({e.id.layer, e.id.head, {e.delta, e.fraction, e.kl, e.value}});
    const nlohmann::json ranking =
        write_ranked_heads(out.file("patching.csv"), {"delta", "fraction", "kl", "value"}, rows, heads);
    write_patching_pictures(out, rows, 2, report.metric, layers, heads, "", o);
    nlohmann::json patching = metric_entries(report.metric);
    patching.update({{"clean", json_number(report.clean)},
                     {"corrupted", json_number(report.corrupted)},
                     {"corrupted_tokens", corrupted_tokens},
                     {"heads", ranking},
                     {"findings", patching_findings(report, ranked)}});
    return {{"activation_patching", patching}};
}

PatchingReport mean_patching_report(const CorpusPatching& p) {
    PatchingReport mean;
    mean.metric = p.metric();
    mean.clean = p.moments(PatchingPart::clean).mean_or_nan();
    mean.corrupted = p.moments(PatchingPart::corrupted).mean_or_nan();
    const double effect = mean.corrupted - mean.clean;
    for (int64_t l = 0; l < p.layers(); ++l)
        for (int64_t h = 0; h < p.heads(); ++h) {
            const double delta = p.moments(PatchingPart::delta, l, h).mean_or_nan();
            mean.heads.push_back({{l, h},
                                  mean.clean + delta,
                                  delta,
                                  effect != 0 ? delta / effect : NAN,
                                  p.moments(PatchingPart::kl, l, h).mean_or_nan()});
        }
    return mean;
}

nlohmann::json write_corpus_patching_outputs(OutputDir& out, const CorpusPatching& p, const ReportOptions& o) {
    const PatchingReport mean = mean_patching_report(p);
    const std::vector<HeadPatchEffect> ranked = ranked_patches(mean);
    std::vector<RankedHeadRow> rows;
    for (const HeadPatchEffect& e : ranked) {
        const RunningMoments &delta = p.moments(PatchingPart::delta, e.id.layer, e.id.head),
                             &kl = p.moments(PatchingPart::kl, e.id.layer, e.id.head);
        rows.push_back({e.id.layer,
                        e.id.head,
                        {e.delta, delta.population_std(), e.fraction, e.kl, kl.population_std(),
                         static_cast<double>(delta.count)}});
    }
    const nlohmann::json ranking =
        write_ranked_heads(out.file("patching.csv"),
                           {"delta_mean", "delta_std", "fraction", "kl_mean", "kl_std", "pairs"}, rows, p.heads());
    const std::string over = fmt::format(" (mean over {} pairs)", p.pairs());
    write_patching_pictures(out, rows, 3, mean.metric, p.layers(), p.heads(), over, o);
    std::vector<std::string> findings = patching_findings(mean, ranked);
    for (std::string& finding : findings) finding = fmt::format("over {} pairs, {}", p.pairs(), finding);
    nlohmann::json patching = metric_entries(p.metric());
    patching.update({{"pairs", p.pairs()},
                     {"clean", mean_and_std_json(p.moments(PatchingPart::clean))},
                     {"corrupted", mean_and_std_json(p.moments(PatchingPart::corrupted))},
                     {"heads", ranking},
                     {"findings", findings}});
    return {{"activation_patching", patching}};
}

}  // namespace attn_viz
