// True head ablation: the ablated layer output from the clean run's head outputs, the partial
// forward from that layer on, and the loss and KL divergence of the resulting logits.
#include "head_ablation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "error.hpp"
#include "head_names.hpp"
#include "head_replacement.hpp"

namespace attn_viz {
namespace {

// row: [V] logits -> log sum_v e^row_v, in double.
double log_sum_exp(const float* row, int64_t vocab) {
    const double top = *std::max_element(row, row + vocab);
    double sum = 0;
    for (int64_t v = 0; v < vocab; ++v) sum += std::exp(double(row[v]) - top);
    return top + std::log(sum);
}

}  // namespace

AblationMode parse_ablation_mode(const std::string& text) {
    if (text == "zero") return AblationMode::zero;
    if (text == "mean") return AblationMode::mean;
    throw Error(ErrorKind::usage, fmt::format("ablation mode '{}': expected zero or mean", text));
}

const std::vector<AblationMeasure>& ablation_measures() {
    static const std::vector<AblationMeasure> measures = {{"loss", &HeadAblationEffect::loss},
                                                          {"delta_loss", &HeadAblationEffect::delta_loss},
                                                          {"kl", &HeadAblationEffect::kl}};
    return measures;
}

const char* ablation_mode_name(AblationMode mode) { return mode == AblationMode::zero ? "zero" : "mean"; }

std::vector<AblatedHead> parse_ablated_heads(const std::string& text, int64_t layers, int64_t heads) {
    std::vector<AblatedHead> chosen;
    if (text == "all") {
        for (int64_t l = 0; l < layers; ++l)
            for (int64_t h = 0; h < heads; ++h) chosen.push_back({l, h});
        return chosen;
    }
    for (const HeadName& name : parse_head_names(text, "heads")) {
        const AblatedHead id{*name.layer, name.head};
        const std::string shown = head_name(id.layer, id.head);
        if (id.layer >= layers || id.head >= heads)
            throw Error(ErrorKind::usage,
                        fmt::format("heads '{}': head {} is out of range: the model has {} layers of {} heads", text,
                                    shown, layers, heads));
        if (std::find(chosen.begin(), chosen.end(), id) != chosen.end())
            throw Error(ErrorKind::usage, fmt::format("heads '{}': head {} is listed twice", text, shown));
        chosen.push_back(id);
    }
    return chosen;
}

double next_token_loss(const Tensor& logits, const std::vector<int>& tokens) {
    const int64_t T = logits.dim(0), vocab = logits.dim(1);
    if (T < 2) return std::numeric_limits<double>::quiet_NaN();
    double total = 0;
    for (int64_t t = 0; t + 1 < T; ++t) {
        const float* row = logits.ptr() + t * vocab;
        total += log_sum_exp(row, vocab) - row[tokens[static_cast<size_t>(t + 1)]];
    }
    return total / static_cast<double>(T - 1);
}

std::vector<double> next_token_kl(const Tensor& p_logits, const Tensor& q_logits) {
    const int64_t T = p_logits.dim(0), vocab = p_logits.dim(1);
    std::vector<double> kl(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
        const float* p = p_logits.ptr() + t * vocab;
        const float* q = q_logits.ptr() + t * vocab;
        const double log_zp = log_sum_exp(p, vocab), log_zq = log_sum_exp(q, vocab);
        double sum = 0;
        for (int64_t v = 0; v < vocab; ++v) {
            const double log_p = p[v] - log_zp, log_q = q[v] - log_zq;
            sum += std::exp(log_p) * (log_p - log_q);
        }
        kl[static_cast<size_t>(t)] = std::max(sum, 0.0);
    }
    return kl;
}

double mean_next_token_kl(const Tensor& clean, const Tensor& ablated) {
    const std::vector<double> kl = next_token_kl(clean, ablated);
    return std::accumulate(kl.begin(), kl.end(), 0.0) / static_cast<double>(kl.size());
}

HeadAblationEffect ablation_effect(const AblatedHead& id, const Tensor& clean, const Tensor& ablated,
                                   const std::vector<int>& tokens, double clean_loss) {
    const double loss = next_token_loss(ablated, tokens);
    return {id, loss, loss - clean_loss, mean_next_token_kl(clean, ablated)};
}

Tensor logits_with_head_replaced(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                                 const AblatedHead& id, const Tensor& replacement) {
    const LayerResult& layer = clean.layers.at(static_cast<size_t>(id.layer));
    const LayerWeights& attention = *model.attention_weights()[static_cast<size_t>(id.layer)];
    const Tensor output = output_with_head_replaced(backend, attention, layer, id.head, replacement);
    return model.logits_from(clean, static_cast<size_t>(id.layer), output);
}

AblationReport ablate_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                            const std::vector<AblatedHead>& heads, AblationMode mode, const StepCallback& on_head) {
    AblationReport report;
    report.mode = mode;
    report.clean_loss = next_token_loss(clean.logits, clean.tokens);
    for (const AblatedHead& id : heads) {
        const int64_t d_head = model.attention_weights()[static_cast<size_t>(id.layer)]->d_head;
        const Tensor z = head_output(clean.layers.at(static_cast<size_t>(id.layer)).context, id.head, d_head);
        const Tensor replacement = ablation_replacement(z, mode == AblationMode::mean);
        const Tensor logits = logits_with_head_replaced(model, backend, clean, id, replacement);
        report.heads.push_back(ablation_effect(id, clean.logits, logits, clean.tokens, report.clean_loss));
        if (on_head) on_head(static_cast<int64_t>(report.heads.size()), static_cast<int64_t>(heads.size()));
    }
    return report;
}

}  // namespace attn_viz
