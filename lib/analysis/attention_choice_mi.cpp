#include "attention_choice_mi.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "parallel_for.hpp"

namespace attn_viz {

namespace {

// The plug-in entropy (nats) of the values in `sorted` (ascending; equal values adjacent) and
// the number K of distinct values.
struct Entropy {
    double plug_in = 0;
    int64_t bins = 0;
};
Entropy sorted_entropy(const std::vector<int64_t>& sorted) {
    Entropy e;
    const double n = static_cast<double>(sorted.size());
    for (size_t start = 0; start < sorted.size();) {
        size_t end = start;
        while (end < sorted.size() && sorted[end] == sorted[start]) ++end;
        const double p = static_cast<double>(end - start) / n;
        e.plug_in -= p * std::log(p);
        ++e.bins;
        start = end;
    }
    return e;
}

}  // namespace

std::vector<std::vector<int64_t>> attention_choices(const std::vector<const LayerResult*>& layers, int threads) {
    std::vector<std::pair<const LayerResult*, int64_t>> heads;  // (layer, head), layer-major
    for (const LayerResult* layer : layers)
        for (int64_t h = 0; h < layer->attention.dim(0); ++h) heads.emplace_back(layer, h);
    std::vector<std::vector<int64_t>> choices(heads.size());
    parallel_for(
        static_cast<int64_t>(heads.size()), threads,
        [&](int64_t n) {
            const auto [layer, h] = heads[static_cast<size_t>(n)];
            const int64_t T = layer->attention.dim(1), S = layer->attention.dim(2);
            std::vector<int64_t>& choice = choices[static_cast<size_t>(n)];
            choice.assign(static_cast<size_t>(T), -1);
            for (int64_t i = 0; i < T; ++i) {
                if (layer->visibility.visible_count(i) == 0) continue;
                // Keys past the causal end hold exact zeros, which never beat the row's first largest.
                const float* row = layer->attention.ptr() + (h * T + i) * S;
                choice[i] = std::max_element(row, row + layer->visibility.visible_end(i)) - row;
            }
        },
        layers.empty() ? 0 : layers[0]->attention.dim(1) * layers[0]->attention.dim(2));
    return choices;
}

HeadMatrix attention_choice_mi(const std::vector<const LayerResult*>& layers, int threads) {
    const std::vector<std::vector<int64_t>> choices = attention_choices(layers, threads);
    const int64_t N = static_cast<int64_t>(choices.size());
    HeadMatrix mi(N);
    if (N == 0) return mi;
    const int64_t S = layers[0]->attention.dim(2);
    // Every head shares the visibility, so the rows that count are the same for all.
    std::vector<size_t> rows;
    for (size_t i = 0; i < choices[0].size(); ++i)
        if (choices[0][i] >= 0) rows.push_back(i);
    const double n = static_cast<double>(rows.size());
    if (rows.empty()) return mi;
    // Step 1: each head's own entropy H(a) and its number of distinct choices K_a.
    std::vector<Entropy> own(static_cast<size_t>(N));
    for (int64_t a = 0; a < N; ++a) {
        std::vector<int64_t> values;
        for (size_t i : rows) values.push_back(choices[a][i]);
        std::sort(values.begin(), values.end());
        own[a] = sorted_entropy(values);
    }
    // Step 2: the joint entropy of every pair from its sorted pair codes a * S + b.
    parallel_for(
        N, threads,
        [&](int64_t a) {
            std::vector<int64_t> codes(rows.size());
            for (int64_t b = a; b < N; ++b) {
                for (size_t k = 0; k < rows.size(); ++k) codes[k] = choices[a][rows[k]] * S + choices[b][rows[k]];
                std::sort(codes.begin(), codes.end());
                const Entropy joint = sorted_entropy(codes);
                const double plug_in = own[a].plug_in + own[b].plug_in - joint.plug_in;
                const double correction = static_cast<double>(own[a].bins + own[b].bins - joint.bins - 1) / (2 * n);
                mi.at(a, b) = plug_in + correction;
            }
        },
        N * static_cast<int64_t>(rows.size()));
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a + 1; b < N; ++b) mi.at(b, a) = mi.at(a, b);
    return mi;
}

}  // namespace attn_viz
