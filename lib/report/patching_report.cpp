#include "patching_report.hpp"

#include <algorithm>
#include <cmath>

#include "head_effect_outputs.hpp"
#include "head_names.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

// The metric in words, for titles and findings.
std::string metric_words(const PatchMetric& metric) {
    if (metric.kind == PatchMetric::Kind::loss) return "the clean next-token loss";
    return "logit(" + std::to_string(metric.correct) + ") - logit(" + std::to_string(metric.wrong) +
           ") at the last position";
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
    const std::string name = "activation patching (" + patch_metric_name(report.metric) + ")";
    const HeadPatchEffect& most_kl =
        *std::max_element(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.kl < b.kl; });
    const std::string kl_sentence = "the largest change of the predictions is " +
                                    head_name(most_kl.id.layer, most_kl.id.head) + "'s (KL " +
                                    short_number(most_kl.kl) + " nats)";
    const HeadPatchEffect& top = ranked.front();
    if (!std::isfinite(top.delta)) return {name + ": one token has no next-token loss; " + kl_sentence};
    const double effect = report.corrupted - report.clean;
    std::string first = name + ": patching " + head_name(top.id.layer, top.id.head) +
                        " from the corrupted input moves " + metric_words(report.metric) + " most, by " +
                        short_number(top.delta, "%+.4g") + " (clean " + short_number(report.clean) + ", corrupted " +
                        short_number(report.corrupted);
    if (std::isfinite(top.fraction))
        first += "; " + short_number(100 * top.fraction, "%.1f") + "% of the corrupted run's change";
    std::vector<std::string> findings = {first + ")"};
    const auto carrying = std::count_if(ranked.begin(), ranked.end(), [&](const HeadPatchEffect& e) {
        return std::isfinite(e.fraction) && e.fraction > 0.1;
    });
    findings.push_back(effect == 0 ? "the corrupted input does not change the metric; " + kl_sentence
                                   : std::to_string(carrying) + " of " + std::to_string(ranked.size()) +
                                         " heads alone carry more than 10% of the corrupted run's change (" +
                                         short_number(effect, "%+.4g") + "); " + kl_sentence);
    return findings;
}

nlohmann::json write_patching_outputs(OutputDir& out, const PatchingReport& report, int64_t layers, int64_t heads,
                                      const std::vector<std::string>& corrupted_tokens, const ReportOptions& o) {
    const std::vector<HeadPatchEffect> ranked = ranked_patches(report);
    std::vector<RankedHeadRow> rows;
    for (const HeadPatchEffect& e : ranked)
        rows.push_back({e.id.layer, e.id.head, {e.delta, e.fraction, e.kl, e.value}});
    const nlohmann::json ranking =
        write_ranked_heads(out.file("patching.csv"), {"delta", "fraction", "kl", "value"}, rows, heads);
    if (o.pictures) {
        const std::vector<float> delta = layer_head_values(rows, 0, layers, heads),
                                 kl = layer_head_values(rows, 2, layers, heads);
        write_layer_head_png(
            out.file("patching_delta.png"), delta, layers, heads,
            "Change of " + metric_words(report.metric) + " when a head is patched from the corrupted input", "change",
            o, true);
        write_layer_head_png(out.file("patching_kl.png"), kl, layers, heads,
                             "KL(clean || patched) of next-token distributions", "mean KL (nats)", o);
    }
    return {{"activation_patching",
             {{"metric", patch_metric_name(report.metric)},
              {"clean", json_number(report.clean)},
              {"corrupted", json_number(report.corrupted)},
              {"corrupted_tokens", corrupted_tokens},
              {"heads", ranking},
              {"findings", patching_findings(report, ranked)}}}};
}

}  // namespace attn_viz
