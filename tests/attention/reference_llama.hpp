// A double-precision Llama forward written like llama2.c's run.c forward(): one position at a
// time with a key/value cache. The oneDNN whole-model path (lib/attention/whole_model.cpp) is checked
// against it; it shares no code with the library.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "model_weights.hpp"

namespace test_support {

using attn_viz::BlockWeights;
using attn_viz::ModelConfig;
using attn_viz::ModelWeights;
using attn_viz::Tensor;

struct ReferenceRun {
    std::vector<std::vector<double>> attention;     // per layer, [H, T, T]
    std::vector<std::vector<double>> head_outputs;  // per layer, [T, H*hs]: the heads' outputs before W_O
    std::vector<double> final_residual;             // [T, D]: the residual stream before the final norm
    std::vector<double> logits;                     // [T, V]
};

// One head whose output is replaced by `replacement`: [hs] at every position, [T, hs] one row per
// position, or empty (zeros).
struct ReferenceAblation {
    int64_t layer = -1, head = -1;
    std::vector<double> replacement;
};

// logits: [T, V] -> mean_{t<T-1} -log softmax(logits_t)[tokens_{t+1}], written from docs/metrics.md.
inline double reference_next_token_loss(const std::vector<double>& logits, const std::vector<int>& tokens,
                                        int64_t vocab) {
    double total = 0;
    const size_t T = tokens.size();
    for (size_t t = 0; t + 1 < T; ++t) {
        double z = 0;
        for (int64_t v = 0; v < vocab; ++v) z += std::exp(logits[t * vocab + v]);
        total += std::log(z) - logits[t * vocab + tokens[t + 1]];
    }
    return T < 2 ? NAN : total / static_cast<double>(T - 1);
}

// rms_norm(x) * weight with llama2.c's eps.
inline std::vector<double> reference_rms_norm(const std::vector<double>& x, const Tensor& weight) {
    double sum = 0;
    for (double v : x) sum += v * v;
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(x.size()) + 1e-5);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * weight.data[i];
    return y;
}

// x: [k]; w: [k, n] (x W) -> [n]
inline std::vector<double> reference_times(const std::vector<double>& x, const Tensor& w) {
    const int64_t k = w.dim(0), n = w.dim(1);
    std::vector<double> y(static_cast<size_t>(n), 0.0);
    for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) y[j] += x[i] * w.data[i * n + j];
    return y;
}

// llama2.c's forward() in double: one position at a time with a key/value cache, RoPE from
// per-dimension frequencies, query head h reading KV head h / (H / KV); with the config's
// embedding_scale, residual_scale and logits_scaling and each layer's score_scale (Granite's). With `ablation`, that
// head's output is replaced before W_O (head_outputs keep the unreplaced values).
inline ReferenceRun reference_forward(const ModelWeights& w, const std::vector<int>& tokens,
                                      const ReferenceAblation& ablation = {}) {
    const ModelConfig& c = w.config;
    const int64_t T = static_cast<int64_t>(tokens.size()), D = c.d_model, H = c.n_heads, hs = D / H;
    const int64_t kv_width = c.n_kv_heads * hs, kv_mul = H / c.n_kv_heads;
    ReferenceRun run;
    run.attention.assign(static_cast<size_t>(c.n_layers), std::vector<double>(static_cast<size_t>(H * T * T), 0.0));
    run.head_outputs.assign(static_cast<size_t>(c.n_layers), std::vector<double>(static_cast<size_t>(T * D), 0.0));
    run.logits.resize(static_cast<size_t>(T * c.vocab_size));
    run.final_residual.resize(static_cast<size_t>(T * D));
    std::vector<std::vector<std::vector<double>>> key_cache(static_cast<size_t>(c.n_layers)), value_cache(key_cache);
    for (int64_t pos = 0; pos < T; ++pos) {
        std::vector<double> x(w.token_embedding.data.begin() + tokens[pos] * D,
                              w.token_embedding.data.begin() + (tokens[pos] + 1) * D);
        for (double& v : x) v *= c.embedding_scale;
        for (int64_t l = 0; l < c.n_layers; ++l) {
            const BlockWeights& b = *w.blocks->held(l);
            const std::vector<double> xb = reference_rms_norm(x, b.attention_norm.weight);
            std::vector<double> q = reference_times(xb, b.attention.w_q), k = reference_times(xb, b.attention.w_k);
            for (int64_t i = 0; i < D; i += 2) {
                const double freq = 1.0 / std::pow(10000.0, static_cast<double>(i % hs) / static_cast<double>(hs));
                const double fcr = std::cos(pos * freq), fci = std::sin(pos * freq);
                for (std::vector<double>* v : {&q, &k}) {
                    if (v == &k && i >= kv_width) continue;
                    const double v0 = (*v)[i], v1 = (*v)[i + 1];
                    (*v)[i] = v0 * fcr - v1 * fci;
                    (*v)[i + 1] = v0 * fci + v1 * fcr;
                }
            }
            key_cache[l].push_back(k);
            value_cache[l].push_back(reference_times(xb, b.attention.w_v));
            std::vector<double> heads(static_cast<size_t>(D), 0.0);
            for (int64_t h = 0; h < H; ++h) {
                const int64_t kv_offset = (h / kv_mul) * hs;
                std::vector<double> att(static_cast<size_t>(pos + 1));
                double max_score = -INFINITY, total = 0;
                for (int64_t t = 0; t <= pos; ++t) {
                    double score = 0;
                    for (int64_t i = 0; i < hs; ++i) score += q[h * hs + i] * key_cache[l][t][kv_offset + i];
                    const double scale = b.attention.score_scale > 0 ? b.attention.score_scale
                                                                     : 1.0 / std::sqrt(static_cast<double>(hs));
                    att[t] = score * scale;
                    max_score = std::max(max_score, att[t]);
                }
                for (double& a : att) total += (a = std::exp(a - max_score));
                for (int64_t t = 0; t <= pos; ++t) {
                    att[t] /= total;
                    run.attention[l][(h * T + pos) * T + t] = att[t];
                    for (int64_t i = 0; i < hs; ++i) heads[h * hs + i] += att[t] * value_cache[l][t][kv_offset + i];
                }
            }
            std::copy(heads.begin(), heads.end(), run.head_outputs[l].begin() + pos * D);
            if (l == ablation.layer)
                for (int64_t i = 0; i < hs; ++i) {
                    const size_t row =
                        ablation.replacement.size() == static_cast<size_t>(T * hs) ? static_cast<size_t>(pos * hs) : 0;
                    heads[ablation.head * hs + i] = ablation.replacement.empty() ? 0.0 : ablation.replacement[row + i];
                }
            const std::vector<double> attended = reference_times(heads, b.attention.w_o);
            for (int64_t i = 0; i < D; ++i) x[i] += c.residual_scale * attended[i];
            const std::vector<double> xf = reference_rms_norm(x, b.feed_forward_norm.weight);
            std::vector<double> gate = reference_times(xf, transposed(b.w_in));
            const std::vector<double> up = reference_times(xf, transposed(b.w_up));
            for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
            const std::vector<double> down = reference_times(gate, transposed(b.w_out));
            for (int64_t i = 0; i < D; ++i) x[i] += c.residual_scale * down[i];
        }
        std::copy(x.begin(), x.end(), run.final_residual.begin() + pos * D);
        std::vector<double> logits =
            reference_times(reference_rms_norm(x, w.final_norm.weight), transposed(w.classifier_matrix()));
        for (double& v : logits) v /= c.logits_scaling;
        std::copy(logits.begin(), logits.end(), run.logits.begin() + pos * c.vocab_size);
    }
    return run;
}

// Head h's outputs in layer l of a reference run of T tokens: [T, hs].
inline std::vector<double> reference_head_rows(const ReferenceRun& run, int64_t l, int64_t h, int64_t hs, int64_t D,
                                               int64_t T) {
    std::vector<double> rows;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < hs; ++i) rows.push_back(run.head_outputs[l][t * D + h * hs + i]);
    return rows;
}

}  // namespace test_support
