#include "logit_attribution_report.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "file_write.hpp"
#include "head_effect_outputs.hpp"
#include "head_names.hpp"
#include "stats_report.hpp"
#include "token_reference.hpp"

namespace attn_viz {
namespace {

// One head's contributions summarised over the positions.
struct HeadAttribution {
    int64_t layer = 0, head = 0;
    double mean = 0, last = 0;
};

std::vector<HeadAttribution> head_attributions(const LogitAttribution& a) {
    std::vector<HeadAttribution> heads;
    for (int64_t l = 0; l < a.layers; ++l)
        for (int64_t h = 0; h < a.heads; ++h) {
            HeadAttribution e{l, h, 0, a.head_at(l, h, a.tokens - 1)};
            for (int64_t t = 0; t < a.tokens; ++t) e.mean += a.head_at(l, h, t) / static_cast<double>(a.tokens);
            heads.push_back(e);
        }
    return heads;
}

// Ranked by mean contribution, most toward the target first (then layer, head).
std::vector<HeadAttribution> ranked(std::vector<HeadAttribution> heads) {
    std::stable_sort(heads.begin(), heads.end(),
                     [](const HeadAttribution& x, const HeadAttribution& y) { return x.mean > y.mean; });
    return heads;
}

// values: [L, T] -> the mean over T of row l.
double row_mean(const std::vector<double>& values, int64_t l, int64_t T) {
    return std::accumulate(values.begin() + l * T, values.begin() + (l + 1) * T, 0.0) / static_cast<double>(T);
}

double mean_of(const std::vector<double>& values) {
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

std::vector<std::string> logit_attribution_findings(const LogitAttribution& a,
                                                    const std::vector<std::string>& target_labels) {
    const std::vector<HeadAttribution> order = ranked(head_attributions(a));
    if (order.empty()) return {};
    const HeadAttribution &top = order.front(), &bottom = order.back();
    double heads = 0, mlp = 0;
    for (const HeadAttribution& e : order) heads += e.mean;
    for (int64_t l = 0; l < a.layers; ++l) mlp += row_mean(a.mlp, l, a.tokens);
    std::vector<std::string> findings = {fmt::format(
        "direct logit attribution: {} writes most toward the target token ({} on average over {} positions), {} most "
        "against it ({}); of the mean logit {}, the heads give {}, the feed-forwards {}, the embeddings {}",
        head_name(top.layer, top.head), signed_short_number(top.mean), a.tokens, head_name(bottom.layer, bottom.head),
        signed_short_number(bottom.mean), short_number(mean_of(a.logits), "{:.3g}"), signed_short_number(heads),
        signed_short_number(mlp), signed_short_number(mean_of(a.embedding)))};
    const auto last_top =
        std::max_element(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.last < y.last; });
    findings.push_back(fmt::format("at the last position the head that writes most toward '{}' (logit {}) is {} ({})",
                                   target_labels.back(), short_number(a.logits.back(), "{:.3g}"),
                                   head_name(last_top->layer, last_top->head), signed_short_number(last_top->last)));
    return findings;
}

nlohmann::json write_logit_attribution_outputs(OutputDir& out, const LogitAttribution& a,
                                               const std::vector<std::string>& target_labels, const std::string& target,
                                               const ReportOptions& o) {
    const int64_t T = a.tokens;
    // The target's text is the last column: it came after the others, which keep their places.
    std::string csv = "position,target_id,component,layer,head,contribution,target\n";
    nlohmann::json positions = nlohmann::json::array();
    for (int64_t t = 0; t < T; ++t) {
        const std::string row = fmt::format("{},{},", t, a.targets[t]);
        const std::string target = fmt::format(",{}\n", csv_text(target_labels[t]));
        csv += fmt::format("{}embedding,,,{}{}", row, csv_number(a.embedding[t]), target);
        for (int64_t l = 0; l < a.layers; ++l) {
            const std::string layer = fmt::format("{},", l);
            for (int64_t h = 0; h < a.heads; ++h)
                csv += fmt::format("{}head,{}{},{}{}", row, layer, h, csv_number(a.head_at(l, h, t)), target);
            csv += fmt::format("{}attention_bias,{},{}{}", row, layer, csv_number(a.attention_bias[l * T + t]), target);
            csv += fmt::format("{}mlp,{},{}{}", row, layer, csv_number(a.mlp[l * T + t]), target);
        }
        csv += fmt::format("{}norm_bias,,,{}{}", row, csv_number(a.norm_bias[t]), target);
        positions.push_back({{"position", t},
                             {"target_id", a.targets[t]},
                             {"target", target_labels[t]},
                             {"logit", json_number(a.logits[t])},
                             {"embedding", json_number(a.embedding[t])},
                             {"norm_bias", json_number(a.norm_bias[t])}});
    }
    write_file_bytes(out.file("logit_attribution.csv"), csv);

    const std::vector<HeadAttribution> heads = head_attributions(a);
    nlohmann::json layers = nlohmann::json::array();
    for (int64_t l = 0; l < a.layers; ++l) {
        double head_sum = 0;
        for (int64_t h = 0; h < a.heads; ++h) head_sum += heads[l * a.heads + h].mean;
        layers.push_back({{"layer", l},
                          {"heads", json_number(head_sum)},
                          {"attention_bias", json_number(row_mean(a.attention_bias, l, T))},
                          {"mlp", json_number(row_mean(a.mlp, l, T))}});
    }
    nlohmann::json ranking = nlohmann::json::array();
    const std::vector<HeadAttribution> order = ranked(heads);
    for (size_t r = 0; r < order.size(); ++r)
        ranking.push_back({{"rank", r + 1},
                           {"layer", order[r].layer},
                           {"head", order[r].head},
                           {"mean", json_number(order[r].mean)},
                           {"last", json_number(order[r].last)}});
    if (o.pictures) {
        std::vector<float> mean, last;
        for (const HeadAttribution& e : heads)
            mean.push_back(static_cast<float>(e.mean)), last.push_back(static_cast<float>(e.last));
        write_layer_head_png(out.file("logit_attribution_heads.png"), mean, a.layers, a.heads,
                             fmt::format("Direct logit attribution to the {}, mean over positions", target),
                             "logit contribution", o, true);
        write_layer_head_png(out.file("logit_attribution_last.png"), last, a.layers, a.heads,
                             fmt::format("Direct logit attribution to {} at the last position",
                                         token_words(a.targets.back(), target_labels.back())),
                             "logit contribution", o, true);
    }
    return {{"logit_attribution",
             {{"target", target},
              {"positions", positions},
              {"layers", layers},
              {"heads", ranking},
              {"findings", logit_attribution_findings(a, target_labels)}}}};
}

}  // namespace attn_viz
