#include "head_similarity.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "fast_log.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

constexpr double undefined = std::numeric_limits<double>::quiet_NaN();

// One head's map: where its rows start.
struct HeadMap {
    const float* data = nullptr;  // [T, S]
};

struct RowPair {
    double dot = 0;         // sum_j p_j q_j
    double divergence = 0;  // JS divergence of the two rows, base 2
};

// p, q: [S], two heads' rows for the same query. Sixteen float lanes so the loop vectorizes.
// JS divergence per entry: (p+q)/2 [ln 2 + r ln r + (1-r) ln(1-r)] * 2 / ln 2 / 2 with r = p/(p+q),
// which is exactly 0 for p == q (unlike H(M) - (H(P) + H(Q))/2).
[[gnu::target_clones("avx512f", "avx2", "default")]] RowPair compare_rows(const float* p, const float* q, int64_t keys) {
    constexpr int lanes = 16;
    constexpr float ln2 = 0.693147180559945f;
    float dot[lanes] = {}, divergence[lanes] = {};
    auto entry = [](float a, float b) {
        const float total = a + b;
        const float r = a / (total + 1e-30f), s = 1.0f - r;  // 0 when both are 0
        return total * (ln2 + r * fast_ln(r) + s * fast_ln(s));
    };
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes)
        for (int l = 0; l < lanes; ++l) {
            dot[l] += p[j + l] * q[j + l];
            divergence[l] += entry(p[j + l], q[j + l]);
        }
    RowPair sums;
    for (; j < keys; ++j) {
        sums.dot += static_cast<double>(p[j]) * q[j];
        sums.divergence += entry(p[j], q[j]);
    }
    for (int l = 0; l < lanes; ++l) sums.dot += dot[l], sums.divergence += divergence[l];
    sums.divergence /= 2.0 * std::log(2.0);  // mean of the two KL terms, in bits
    return sums;
}

}  // namespace

MapSimilarities attention_map_similarities(const std::vector<const LayerResult*>& layers, int threads) {
    // Step 1: list every head's map, checking that all layers share the visibility.
    std::vector<HeadMap> heads;
    const Visibility& vis = layers.at(0)->visibility;
    const int64_t T = vis.queries, S = vis.keys;
    for (const LayerResult* layer : layers) {
        if (layer->visibility.queries != T || layer->visibility.keys != S || layer->visibility.causal != vis.causal ||
            layer->visibility.key_excluded != vis.key_excluded || layer->attention.rank() != 3 ||
            layer->attention.dim(1) != T || layer->attention.dim(2) != S)
            throw Error(ErrorKind::internal, "attention_map_similarities: layers differ in visibility or shape");
        for (int64_t h = 0; h < layer->attention.dim(0); ++h) heads.push_back({layer->attention.ptr() + h * T * S});
    }
    const int64_t N = static_cast<int64_t>(heads.size());

    // Step 2: rows that count (at least one visible key) and the number of visible entries.
    std::vector<int64_t> rows;
    int64_t visible_entries = 0;
    for (int64_t i = 0; i < T; ++i) {
        const int64_t seen = vis.visible_count(i);
        if (seen > 0) rows.push_back(i);
        visible_entries += seen;
    }

    // Step 3: per pair (a <= b), one task per a, rows in order: dot products and JS distances.
    HeadMatrix dot(N, 0.0), distance(N, 0.0);
    std::vector<double> mass(static_cast<size_t>(N), 0.0);
    parallel_for(N, threads, [&](int64_t a) {
        double head_mass = 0;
        for (int64_t i : rows)
            for (int64_t j = 0; j < S; ++j) head_mass += heads[static_cast<size_t>(a)].data[i * S + j];
        mass[static_cast<size_t>(a)] = head_mass;
        constexpr int64_t block = 8;  // rows of head a kept in cache while the other heads stream by
        for (size_t first = 0; first < rows.size(); first += block) {
            const size_t last = std::min(rows.size(), first + block);
            for (int64_t b = a; b < N; ++b) {
                double pair_dot = 0, pair_distance = 0;
                for (size_t n = first; n < last; ++n) {
                    const int64_t i = rows[n];
                    const RowPair row = compare_rows(heads[static_cast<size_t>(a)].data + i * S,
                                                     heads[static_cast<size_t>(b)].data + i * S, S);
                    pair_dot += row.dot;
                    pair_distance += a == b ? 0.0 : std::sqrt(std::clamp(row.divergence, 0.0, 1.0));
                }
                dot.at(a, b) += pair_dot;
                distance.at(a, b) += pair_distance;
            }
        }
    });

    // Step 4: turn the sums into the three matrices.
    MapSimilarities out{HeadMatrix(N), HeadMatrix(N), HeadMatrix(N)};
    const double n_entries = static_cast<double>(std::max<int64_t>(visible_entries, 1));
    auto variance = [&](int64_t a) {
        const double s = mass[static_cast<size_t>(a)], q = dot.at(a, a);
        const double v = q - s * s / n_entries;
        return v > 1e-10 * q ? v : 0.0;  // rounding residue of a constant map counts as constant
    };
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a; b < N; ++b) {
            const double va = variance(a), vb = variance(b);
            const double cov = dot.at(a, b) - mass[static_cast<size_t>(a)] * mass[static_cast<size_t>(b)] / n_entries;
            const double correlation = a == b ? 1.0 : (va > 0 && vb > 0 ? std::clamp(cov / std::sqrt(va * vb), -1.0, 1.0) : 0.0);
            const double norms = std::sqrt(dot.at(a, a) * dot.at(b, b));
            const double cosine = norms > 0 ? std::min(1.0, dot.at(a, b) / norms) : undefined;
            const double js = rows.empty() ? undefined : distance.at(a, b) / static_cast<double>(rows.size());
            out.correlation.at(a, b) = out.correlation.at(b, a) = correlation;
            out.cosine.at(a, b) = out.cosine.at(b, a) = cosine;
            out.js_distance.at(a, b) = out.js_distance.at(b, a) = js;
        }
    return out;
}

HeadMatrix output_cosine(const std::vector<const LayerResult*>& layers) {
    int64_t N = 0;
    for (const LayerResult* layer : layers) N += layer->attention.rank() == 3 ? layer->attention.dim(0) : 0;
    HeadMatrix cosine(N);
    int64_t offset = 0;
    for (const LayerResult* layer : layers) {
        const int64_t H = layer->attention.rank() == 3 ? layer->attention.dim(0) : 0;
        const Tensor& gram = layer->contribution_gram;
        if (gram.size() == H * H)
            for (int64_t a = 0; a < H; ++a)
                for (int64_t b = 0; b < H; ++b) {
                    const double norms = std::sqrt(static_cast<double>(gram.data[a * H + a]) * gram.data[b * H + b]);
                    cosine.at(offset + a, offset + b) =
                        norms > 0 ? std::clamp(gram.data[a * H + b] / norms, -1.0, 1.0) : undefined;
                }
        offset += H;
    }
    return cosine;
}

}  // namespace attn_viz
