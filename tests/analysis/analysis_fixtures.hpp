// Random LayerResults built by hand (softmax of random scores over random visibility), for the
// "analysis" tests: they exercise the statistics without running oneDNN.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "attention.hpp"
#include "head_analysis.hpp"
#include "support.hpp"

namespace analysis_fixtures {

// The analysis tests' one backend (as a program has one), and the default analysis options on it.
inline attn_viz::OnednnBackend& test_backend() {
    static attn_viz::OnednnBackend backend;
    return backend;
}
inline attn_viz::AnalysisOptions default_options() {
    attn_viz::AnalysisOptions options;
    options.backend = &test_backend();
    return options;
}

struct RandomLayerShape {
    int64_t heads = 2, queries = 5, keys = 5, d_model = 6;
    bool causal = false;
    double padding = 0.0;  // chance that a key is padding
    int64_t window = 0;    // sliding window of a causal map, 0 = none
};

// Every field of LayerResult filled consistently: attention rows are softmaxes of random scores
// with per-head sharpness (so some heads are peaked, some flat), logit_margin from the same
// scores, random values [H, S, 3] and the head outputs A_h V_h in context, contributions c[h][t] random vectors giving
// contribution_norms, contribution_gram and output = sum_h c[h] + bias.
inline attn_viz::LayerResult random_layer(const RandomLayerShape& shape) {
    using namespace attn_viz;
    auto& rng = test_support::rng();
    std::uniform_real_distribution<double> unit(0.0, 1.0), centred(-1.0, 1.0);
    const int64_t H = shape.heads, T = shape.queries, S = shape.keys, D = shape.d_model;
    LayerResult r;
    r.visibility.queries = T;
    r.visibility.keys = S;
    r.visibility.causal = shape.causal;
    r.visibility.window = shape.window;
    if (shape.padding > 0) {
        r.visibility.key_excluded.resize(static_cast<size_t>(S));
        for (auto& x : r.visibility.key_excluded) x = unit(rng) < shape.padding;
    }
    r.attention = Tensor({H, T, S});
    r.logit_margin = Tensor({H, T});
    for (int64_t h = 0; h < H; ++h) {
        const double sharpness = 0.5 + 8.0 * unit(rng);
        for (int64_t i = 0; i < T; ++i) {
            std::vector<double> scores(static_cast<size_t>(S), -INFINITY);
            double top = -INFINITY;
            for (int64_t j = 0; j < S; ++j)
                if (r.visibility.visible(i, j)) scores[j] = sharpness * centred(rng), top = std::max(top, scores[j]);
            if (top == -INFINITY) continue;
            double total = 0;
            for (double& s : scores) total += std::exp(s - top);
            for (int64_t j = 0; j < S; ++j)
                r.attention.data[(h * T + i) * S + j] = static_cast<float>(std::exp(scores[j] - top) / total);
            std::vector<double> sorted;
            for (double s : scores)
                if (s > -INFINITY) sorted.push_back(s);
            std::sort(sorted.rbegin(), sorted.rend());
            r.logit_margin.data[h * T + i] = sorted.size() >= 2 ? static_cast<float>(sorted[0] - sorted[1]) : 0.0f;
        }
    }
    const int64_t d_h = 3;
    r.values = test_support::random_tensor({H, S, d_h});
    r.context = Tensor({T, H * d_h});
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
            for (int64_t k = 0; k < d_h; ++k) {
                double z = 0;
                for (int64_t j = 0; j < S; ++j)
                    z += double(r.attention.data[(h * T + i) * S + j]) * r.values.data[(h * S + j) * d_h + k];
                r.context.data[i * H * d_h + h * d_h + k] = static_cast<float>(z);
            }
    const Tensor contributions = test_support::random_tensor({H, T, D});
    r.contribution_norms = Tensor({H, T});
    r.contribution_gram = Tensor({H, H});
    r.output = test_support::random_tensor({T, D}, 0.1f);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t) {
            double norm = 0;
            for (int64_t d = 0; d < D; ++d) {
                const double c = contributions.data[(h * T + t) * D + d];
                norm += c * c;
                r.output.data[t * D + d] += static_cast<float>(c);
            }
            r.contribution_norms.data[h * T + t] = static_cast<float>(std::sqrt(norm));
        }
    for (int64_t a = 0; a < H; ++a)
        for (int64_t b = 0; b < H; ++b) {
            double dot = 0;
            for (int64_t k = 0; k < T * D; ++k)
                dot += double(contributions.data[a * T * D + k]) * contributions.data[b * T * D + k];
            r.contribution_gram.data[a * H + b] = static_cast<float>(dot);
        }
    return r;
}

// n token ids from a small vocabulary, so repeats (duplicate/induction targets) occur.
inline std::vector<int64_t> random_tokens(int64_t n, int64_t vocabulary) {
    std::uniform_int_distribution<int64_t> pick(0, vocabulary - 1);
    std::vector<int64_t> tokens(static_cast<size_t>(n));
    for (auto& t : tokens) t = pick(test_support::rng());
    return tokens;
}

}  // namespace analysis_fixtures
