#include "ablation_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "head_effect_outputs.hpp"
#include "head_names.hpp"
#include "stats_report.hpp"

namespace attn_viz {

std::vector<std::string> ablation_findings(const AblationReport& report,
                                           const std::vector<HeadAblationEffect>& ranked) {
    if (ranked.empty()) return {};
    const std::string mode = ablation_mode_name(report.mode);
    const HeadAblationEffect& top = ranked.front();
    const std::string top_name = head_name(top.id.layer, top.id.head);
    // The largest KL: what changes the predictions most, whether or not the loss moves.
    const HeadAblationEffect& most_kl =
        *std::max_element(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.kl < b.kl; });
    const std::string kl_sentence = fmt::format("the largest change of the predictions is {}'s (KL {} nats)",
                                                head_name(most_kl.id.layer, most_kl.id.head), short_number(most_kl.kl));
    if (!std::isfinite(report.clean_loss) || !std::isfinite(top.delta_loss))
        return {fmt::format("ablation ({}): one token has no next-token loss; {}", mode, kl_sentence)};
    std::vector<std::string> findings;
    if (top.delta_loss > 0)
        findings.push_back(fmt::format(
            "ablation ({}): removing {} raises the next-token loss most, by {} nats ({}% of the clean {})", mode,
            top_name, short_number(top.delta_loss), short_number(100 * top.delta_loss / report.clean_loss, "{:.1f}"),
            short_number(report.clean_loss)));
    else
        findings.push_back(
            fmt::format("ablation ({}): removing no listed head raises the next-token loss (clean {} nats); the "
                        "largest change is {}'s {}",
                        mode, short_number(report.clean_loss), top_name, short_number(top.delta_loss)));
    // "Matters": moves the loss by more than 1% of the clean loss, either way.
    const double matters = 0.01 * std::abs(report.clean_loss);
    const auto mattering = std::count_if(ranked.begin(), ranked.end(), [&](const HeadAblationEffect& e) {
        return std::isfinite(e.delta_loss) && std::abs(e.delta_loss) > matters;
    });
    findings.push_back(
        fmt::format("{} of {} ablated heads move the loss by more than 1% of the clean loss ({} nats); {}", mattering,
                    ranked.size(), short_number(matters, "{:.3g}"), kl_sentence));
    return findings;
}

std::vector<HeadAblationEffect> ranked_ablations(const AblationReport& report) {
    std::vector<HeadAblationEffect> ranked = report.heads;
    const auto key = [](double x) { return std::isfinite(x) ? x : -INFINITY; };
    std::stable_sort(ranked.begin(), ranked.end(), [&](const HeadAblationEffect& a, const HeadAblationEffect& b) {
        if (key(a.delta_loss) != key(b.delta_loss)) return key(a.delta_loss) > key(b.delta_loss);
        if (a.kl != b.kl) return a.kl > b.kl;
        return a.id.layer != b.id.layer ? a.id.layer < b.id.layer : a.id.head < b.id.head;
    });
    return ranked;
}

nlohmann::json write_ablation_outputs(OutputDir& out, const AblationReport& report, int64_t layers, int64_t heads,
                                      const ReportOptions& o, const std::string& folder) {
    const std::vector<HeadAblationEffect> ranked = ranked_ablations(report);
    std::vector<RankedHeadRow> rows;
    for (const HeadAblationEffect& e : ranked) rows.push_back({e.id.layer, e.id.head, {e.delta_loss, e.kl, e.loss}});
    const nlohmann::json ranking =
        write_ranked_heads(out.file(fmt::format("{}ablation.csv", folder)), {"delta_loss", "kl", "loss"}, rows, heads);
    const std::string mode = ablation_mode_name(report.mode);
    if (o.pictures) {
        const std::vector<float> delta_loss = layer_head_values(rows, 0, layers, heads),
                                 kl = layer_head_values(rows, 1, layers, heads);
        write_layer_head_png(out.file(fmt::format("{}ablation_delta_loss.png", folder)), delta_loss, layers, heads,
                             fmt::format("Change of next-token loss when a head is {}-ablated", mode),
                             "delta loss (nats)", o, true);
        write_layer_head_png(out.file(fmt::format("{}ablation_kl.png", folder)), kl, layers, heads,
                             fmt::format("KL(clean || ablated) of next-token distributions, {} ablation", mode),
                             "mean KL (nats)", o);
    }
    return {{"ablation",
             {{"mode", mode},
              {"clean_loss", json_number(report.clean_loss)},
              {"heads", ranking},
              {"findings", ablation_findings(report, ranked)}}}};
}

}  // namespace attn_viz
