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

// logits: [T, V]. mean_{t < T - shift} -log softmax(logits_t)[tokens_{t + shift}], in double; NaN
// when no position has a target.
double mean_cross_entropy(const Tensor& logits, const std::vector<int>& tokens, int64_t shift) {
    const int64_t T = logits.dim(0), vocab = logits.dim(1);
    if (T <= shift) return std::numeric_limits<double>::quiet_NaN();
    double total = 0;
    for (int64_t t = 0; t + shift < T; ++t) {
        const float* row = logits.ptr() + t * vocab;
        total += log_sum_exp(row, vocab) - row[tokens[static_cast<size_t>(t + shift)]];
    }
    return total / static_cast<double>(T - shift);
}

// Head `id`'s output in `clean` as `mode` replaces it: [T, d_h] zeros, or its mean over the tokens.
Tensor ablated_head_output(const WholeModel& model, const ModelRun& clean, const AblatedHead& id, AblationMode mode) {
    const int64_t d_head = model.attention_weights()[static_cast<size_t>(id.layer)]->d_head;
    const Tensor z = head_output(clean.layers.at(static_cast<size_t>(id.layer)).context, id.head, d_head);
    return ablation_replacement(z, mode == AblationMode::mean);
}

// replacement: [T, d_h] -> head `id`'s layer output [T, D] with its z_h replaced (output_with_head_replaced).
Tensor layer_output_with(WholeModel& model, OnednnBackend& backend, const ModelRun& clean, const AblatedHead& id,
                         const Tensor& replacement) {
    const LayerResult& layer = clean.layers.at(static_cast<size_t>(id.layer));
    const LayerWeights& attention = *model.attention_weights()[static_cast<size_t>(id.layer)];
    return output_with_head_replaced(backend, attention, layer, id.head, replacement);
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
    return mean_cross_entropy(logits, tokens, 1);
}

double masked_lm_loss(const Tensor& logits, const std::vector<int>& tokens) {
    return mean_cross_entropy(logits, tokens, 0);
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
    return model.logits_from(clean, static_cast<size_t>(id.layer),
                             layer_output_with(model, backend, clean, id, replacement));
}

AblationReport ablate_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                            const std::vector<AblatedHead>& heads, AblationMode mode, const StepCallback& on_head) {
    AblationReport report;
    report.mode = mode;
    report.clean_loss = next_token_loss(clean.logits, clean.tokens);
    for (const AblatedHead& id : heads) {
        const Tensor logits =
            logits_with_head_replaced(model, backend, clean, id, ablated_head_output(model, clean, id, mode));
        report.heads.push_back(ablation_effect(id, clean.logits, logits, clean.tokens, report.clean_loss));
        if (on_head) on_head(static_cast<int64_t>(report.heads.size()), static_cast<int64_t>(heads.size()));
    }
    return report;
}

HiddenStateEffect hidden_state_effect(const AblatedHead& id, const Tensor& clean, const Tensor& ablated) {
    if (clean.shape != ablated.shape || clean.rank() != 2)
        throw Error(ErrorKind::internal, "hidden_state_effect: the hidden states differ in shape");
    const int64_t T = clean.dim(0), D = clean.dim(1);
    double cosine_distance = 0, difference = 0, norm = 0;
    for (int64_t t = 0; t < T; ++t) {
        const float* h = clean.ptr() + t * D;
        const float* g = ablated.ptr() + t * D;
        double dot = 0, hh = 0, gg = 0;
        for (int64_t d = 0; d < D; ++d) {
            dot += double(h[d]) * g[d], hh += double(h[d]) * h[d], gg += double(g[d]) * g[d];
            difference += (double(g[d]) - h[d]) * (double(g[d]) - h[d]);
        }
        norm += hh;
        cosine_distance += hh > 0 && gg > 0 ? 1 - dot / std::sqrt(hh * gg) : 1;
    }
    HiddenStateEffect effect{id};
    effect.cosine_distance = cosine_distance / static_cast<double>(T);
    effect.relative_l2 = norm > 0 ? std::sqrt(difference / norm) : std::numeric_limits<double>::quiet_NaN();
    return effect;
}

EncoderAblationReport ablate_encoder_heads(WholeModel& model, OnednnBackend& backend, const ModelRun& clean,
                                           const std::vector<AblatedHead>& heads, AblationMode mode,
                                           const StepCallback& on_head) {
    EncoderAblationReport report;
    report.mode = mode;
    const bool masked_lm = model.has_masked_lm();
    if (masked_lm) report.clean_mlm_loss = masked_lm_loss(model.masked_lm_logits(clean.hidden_states), clean.tokens);
    for (const AblatedHead& id : heads) {
        const Tensor output = layer_output_with(model, backend, clean, id, ablated_head_output(model, clean, id, mode));
        const Tensor hidden = model.hidden_states_from(clean, static_cast<size_t>(id.layer), output);
        HiddenStateEffect effect = hidden_state_effect(id, clean.hidden_states, hidden);
        if (masked_lm) {
            effect.mlm_loss = masked_lm_loss(model.masked_lm_logits(hidden), clean.tokens);
            effect.delta_mlm_loss = effect.mlm_loss - report.clean_mlm_loss;
        }
        report.heads.push_back(effect);
        if (on_head) on_head(static_cast<int64_t>(report.heads.size()), static_cast<int64_t>(heads.size()));
    }
    return report;
}

}  // namespace attn_viz
