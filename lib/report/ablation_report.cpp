#include "ablation_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
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

namespace {

// ablation_delta_loss.png (signed: diverging, centred on 0) and ablation_kl.png of rows' values
// `delta_loss` and `kl` (indices into each row's values); `over` ends the titles.
void write_ablation_pictures(OutputDir& out, const std::string& folder, const std::vector<RankedHeadRow>& rows,
                             size_t delta_loss, size_t kl, AblationMode mode, int64_t layers, int64_t heads,
                             const std::string& over, const ReportOptions& o) {
    if (!o.pictures) return;
    const std::string name = ablation_mode_name(mode);
    write_layer_head_png(out.file(fmt::format("{}ablation_delta_loss.png", folder)),
                         layer_head_values(rows, delta_loss, layers, heads), layers, heads,
                         fmt::format("Change of next-token loss when a head is {}-ablated{}", name, over),
                         "delta loss (nats)", o, true);
    write_layer_head_png(out.file(fmt::format("{}ablation_kl.png", folder)), layer_head_values(rows, kl, layers, heads),
                         layers, heads,
                         fmt::format("KL(clean || ablated) of next-token distributions, {} ablation{}", name, over),
                         "mean KL (nats)", o);
}

// The index of the measure called `name` in ablation_measures().
size_t measure_index(const char* name) {
    const std::vector<AblationMeasure>& measures = ablation_measures();
    for (size_t m = 0; m < measures.size(); ++m)
        if (std::string(measures[m].name) == name) return m;
    throw Error(ErrorKind::internal, fmt::format("no ablation measure {}", name));
}

}  // namespace

nlohmann::json write_ablation_outputs(OutputDir& out, const AblationReport& report, int64_t layers, int64_t heads,
                                      const ReportOptions& o, const std::string& folder) {
    const std::vector<HeadAblationEffect> ranked = ranked_ablations(report);
    std::vector<RankedHeadRow> rows;
    for (const HeadAblationEffect& e : ranked) rows.push_back({e.id.layer, e.id.head, {e.delta_loss, e.kl, e.loss}});
    const nlohmann::json ranking =
        write_ranked_heads(out.file(fmt::format("{}ablation.csv", folder)), {"delta_loss", "kl", "loss"}, rows, heads);
    const std::string mode = ablation_mode_name(report.mode);
    write_ablation_pictures(out, folder, rows, 0, 1, report.mode, layers, heads, "", o);
    return {{"ablation",
             {{"mode", mode},
              {"clean_loss", json_number(report.clean_loss)},
              {"heads", ranking},
              {"findings", ablation_findings(report, ranked)}}}};
}

AblationReport mean_ablation_report(const CorpusAblation& a) {
    AblationReport mean;
    mean.mode = a.mode();
    mean.clean_loss = a.clean_loss().mean_or_nan();
    const std::vector<AblationMeasure>& measures = ablation_measures();
    for (size_t k = 0; k < a.ablated().size(); ++k) {
        HeadAblationEffect& e = mean.heads.emplace_back();
        e.id = a.ablated()[k];
        for (size_t m = 0; m < measures.size(); ++m) e.*measures[m].member = a.moments(k, m).mean_or_nan();
    }
    return mean;
}

nlohmann::json write_corpus_ablation_outputs(OutputDir& out, const CorpusAblation& a, const ReportOptions& o) {
    const AblationReport mean = mean_ablation_report(a);
    const std::vector<HeadAblationEffect> ranked = ranked_ablations(mean);
    const std::vector<AblationMeasure>& measures = ablation_measures();
    std::vector<std::string> names;
    for (const AblationMeasure& m : measures)
        names.push_back(fmt::format("{}_mean", m.name)), names.push_back(fmt::format("{}_std", m.name));
    names.push_back("sequences");
    std::vector<RankedHeadRow> rows;
    for (const HeadAblationEffect& e : ranked) {
        const size_t k =
            static_cast<size_t>(std::find(a.ablated().begin(), a.ablated().end(), e.id) - a.ablated().begin());
        RankedHeadRow& row = rows.emplace_back(RankedHeadRow{e.id.layer, e.id.head, {}});
        for (size_t m = 0; m < measures.size(); ++m)
            row.values.push_back(a.moments(k, m).mean_or_nan()), row.values.push_back(a.moments(k, m).population_std());
        row.values.push_back(static_cast<double>(a.moments(k, measure_index("kl")).count));
    }
    const nlohmann::json ranking = write_ranked_heads(out.file("ablation.csv"), names, rows, a.heads());
    write_ablation_pictures(out, "", rows, 2 * measure_index("delta_loss"), 2 * measure_index("kl"), a.mode(),
                            a.layers(), a.heads(), fmt::format(" (mean over {} sequences)", a.sequences()), o);
    std::vector<std::string> findings = ablation_findings(mean, ranked);
    for (std::string& finding : findings) finding = fmt::format("over {} sequences, {}", a.sequences(), finding);
    return {{"ablation",
             {{"mode", ablation_mode_name(a.mode())},
              {"sequences", a.sequences()},
              {"clean_loss", mean_and_std_json(a.clean_loss())},
              {"heads", ranking},
              {"findings", findings}}}};
}

std::vector<HiddenStateEffect> ranked_encoder_ablations(const EncoderAblationReport& report) {
    std::vector<HiddenStateEffect> ranked = report.heads;
    const auto key = [](double x) { return std::isfinite(x) ? x : -INFINITY; };
    std::stable_sort(ranked.begin(), ranked.end(), [&](const HiddenStateEffect& a, const HiddenStateEffect& b) {
        if (a.cosine_distance != b.cosine_distance) return a.cosine_distance > b.cosine_distance;
        if (key(a.relative_l2) != key(b.relative_l2)) return key(a.relative_l2) > key(b.relative_l2);
        return a.id.layer != b.id.layer ? a.id.layer < b.id.layer : a.id.head < b.id.head;
    });
    return ranked;
}

std::vector<std::string> encoder_ablation_findings(const EncoderAblationReport& report,
                                                   const std::vector<HiddenStateEffect>& ranked) {
    if (ranked.empty()) return {};
    const HiddenStateEffect& top = ranked.front();
    const auto moving =
        std::count_if(ranked.begin(), ranked.end(), [](const HiddenStateEffect& e) { return e.relative_l2 > 0.01; });
    std::vector<std::string> findings = {
        fmt::format("ablation ({}): removing {} changes the final hidden states most (cosine distance {}, relative L2 "
                    "change {})",
                    ablation_mode_name(report.mode), head_name(top.id.layer, top.id.head),
                    short_number(top.cosine_distance, "{:.3g}"), short_number(top.relative_l2, "{:.3g}")),
        fmt::format("{} of {} ablated heads change the final hidden states by more than 1% (relative L2)", moving,
                    ranked.size())};
    if (!std::isfinite(report.clean_mlm_loss)) {
        findings.back() += "; the model has no masked-LM head, so no loss is measured";
        return findings;
    }
    const HiddenStateEffect& most = *std::max_element(
        ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.delta_mlm_loss < b.delta_mlm_loss; });
    findings.push_back(
        fmt::format("the masked-LM loss of the input's own tokens (clean {} nats) rises most without {}, "
                    "by {} nats",
                    short_number(report.clean_mlm_loss), head_name(most.id.layer, most.id.head),
                    short_number(most.delta_mlm_loss)));
    return findings;
}

nlohmann::json write_encoder_ablation_outputs(OutputDir& out, const EncoderAblationReport& report, int64_t layers,
                                              int64_t heads, const ReportOptions& o) {
    const std::vector<HiddenStateEffect> ranked = ranked_encoder_ablations(report);
    const bool masked_lm = std::isfinite(report.clean_mlm_loss);
    std::vector<std::string> names = {"cosine_distance", "relative_l2"};
    if (masked_lm) names.insert(names.end(), {"delta_mlm_loss", "mlm_loss"});
    std::vector<RankedHeadRow> rows;
    for (const HiddenStateEffect& e : ranked) {
        rows.push_back({e.id.layer, e.id.head, {e.cosine_distance, e.relative_l2}});
        if (masked_lm) rows.back().values.insert(rows.back().values.end(), {e.delta_mlm_loss, e.mlm_loss});
    }
    const nlohmann::json ranking = write_ranked_heads(out.file("ablation.csv"), names, rows, heads);
    const std::string mode = ablation_mode_name(report.mode);
    if (o.pictures) {
        write_layer_head_png(
            out.file("ablation_cosine_distance.png"), layer_head_values(rows, 0, layers, heads), layers, heads,
            fmt::format("Cosine distance of the final hidden states, {} ablation", mode), "mean 1 - cos", o);
        write_layer_head_png(out.file("ablation_relative_l2.png"), layer_head_values(rows, 1, layers, heads), layers,
                             heads, fmt::format("Relative change of the final hidden states, {} ablation", mode),
                             "||H' - H|| / ||H||", o);
        if (masked_lm)
            write_layer_head_png(out.file("ablation_delta_mlm_loss.png"), layer_head_values(rows, 2, layers, heads),
                                 layers, heads, fmt::format("Change of masked-LM loss when a head is {}-ablated", mode),
                                 "delta loss (nats)", o, true);
    }
    nlohmann::json ablation = {{"mode", mode},
                               {"measured_on", "final_hidden_states"},
                               {"heads", ranking},
                               {"findings", encoder_ablation_findings(report, ranked)}};
    if (masked_lm) ablation["clean_mlm_loss"] = report.clean_mlm_loss;
    return {{"ablation", std::move(ablation)}};
}

}  // namespace attn_viz
