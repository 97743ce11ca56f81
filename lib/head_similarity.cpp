#include "head_similarity.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "fast_log.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

constexpr double undefined = std::numeric_limits<double>::quiet_NaN();

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

// One head's row with itself: sum p^2 and sum p (no divergence, which is 0).
struct RowSelf {
    double square = 0;
    double mass = 0;
};

[[gnu::target_clones("avx512f", "avx2", "default")]] RowSelf sum_self_row(const float* p, int64_t keys) {
    constexpr int lanes = 16;
    float square[lanes] = {}, mass[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes)
        for (int l = 0; l < lanes; ++l) square[l] += p[j + l] * p[j + l], mass[l] += p[j + l];
    RowSelf sums;
    for (; j < keys; ++j) sums.square += static_cast<double>(p[j]) * p[j], sums.mass += p[j];
    for (int l = 0; l < lanes; ++l) sums.square += square[l], sums.mass += mass[l];
    return sums;
}

// Every head's map over the rows that count, from layers sharing one visibility.
struct MapSet {
    std::vector<const float*> heads;  // each [T, S]
    std::vector<int64_t> rows;        // rows with at least one visible key
    int64_t keys = 0;                 // S
    bool causal = false;              // keys past the diagonal are zero in every map
    double visible_entries = 0;       // sum over rows of visible keys
};

// Appends `layers`' heads to `maps` (rows and keys from the first call's visibility `vis`).
void collect_maps(MapSet& maps, const std::vector<const LayerResult*>& layers, const Visibility& vis) {
    const int64_t T = vis.queries, S = vis.keys;
    for (const LayerResult* layer : layers) {
        if (layer->visibility.queries != T || layer->visibility.keys != S || layer->visibility.causal != vis.causal ||
            layer->visibility.key_excluded != vis.key_excluded || layer->attention.rank() != 3 ||
            layer->attention.dim(1) != T || layer->attention.dim(2) != S)
            throw Error(ErrorKind::internal, "attention map similarities: layers differ in visibility or shape");
        for (int64_t h = 0; h < layer->attention.dim(0); ++h) maps.heads.push_back(layer->attention.ptr() + h * T * S);
    }
    if (!maps.rows.empty() || maps.keys != 0) return;
    maps.keys = S;
    maps.causal = vis.causal;
    for (int64_t i = 0; i < T; ++i) {
        const int64_t seen = vis.visible_count(i);
        if (seen > 0) maps.rows.push_back(i);
        maps.visible_entries += static_cast<double>(seen);
    }
}

struct PairSums {
    HeadMatrix dot, distance;  // at (a, b) for every b in partners[a]
    std::vector<double> mass;  // per head
};

// The pairs to sum, flattened: (a, b) with b in partners[a].
struct PairList {
    std::vector<int64_t> first, second;
};

PairList flatten_pairs(const std::vector<std::vector<int64_t>>& partners) {
    PairList pairs;
    for (size_t a = 0; a < partners.size(); ++a)
        for (int64_t b : partners[a]) pairs.first.push_back(static_cast<int64_t>(a)), pairs.second.push_back(b);
    return pairs;
}

// Rows per block: all heads' rows of one block together stay within about 1 MB (half an L2).
int64_t rows_per_block(int64_t heads, int64_t keys) {
    constexpr int64_t cache_bytes = int64_t{1} << 20;
    const int64_t bytes_per_row = std::max<int64_t>(1, heads * keys * static_cast<int64_t>(sizeof(float)));
    return std::clamp<int64_t>(cache_bytes / bytes_per_row, 1, 64);
}

// Adds the pair (a, b)'s sums over the rows maps.rows[first, last) to dot, distance and (a == b) mass.
void sum_pair_rows(const MapSet& maps, int64_t a, int64_t b, size_t first, size_t last, double& dot,
                   double& distance, double& mass) {
    const int64_t S = maps.keys;
    const float* map_a = maps.heads[static_cast<size_t>(a)];
    const float* map_b = maps.heads[static_cast<size_t>(b)];
    for (size_t n = first; n < last; ++n) {
        const int64_t i = maps.rows[n];
        const int64_t row_end = maps.causal ? std::min(S, i + 1) : S;  // zeros past the diagonal
        if (a == b) {
            const RowSelf row = sum_self_row(map_a + i * S, row_end);
            dot += row.square;
            mass += row.mass;
        } else {
            const RowPair row = compare_rows(map_a + i * S, map_b + i * S, row_end);
            dot += row.dot;
            distance += std::sqrt(std::clamp(row.divergence, 0.0, 1.0));
        }
    }
}

// partners[a]: the heads b >= a to compare with a, always including a itself (for the norms).
// Row blocks are the outer loop: every pair is summed on one block's rows while all heads' rows
// of that block sit in cache, so each map is read from memory once (not once per partner).
// The blocks are cut into a fixed number of chunks, one task each, with partial sums per chunk
// added in chunk order: the result does not depend on the thread count.
PairSums sum_pairs(const MapSet& maps, const std::vector<std::vector<int64_t>>& partners, int threads) {
    const int64_t N = static_cast<int64_t>(maps.heads.size());
    const PairList pairs = flatten_pairs(partners);
    const size_t P = pairs.first.size();
    const int64_t block = rows_per_block(N, maps.keys);
    const int64_t blocks = (static_cast<int64_t>(maps.rows.size()) + block - 1) / block;
    constexpr int64_t max_chunks = 64;
    const int64_t chunks = std::min(blocks, max_chunks);

    // Step 1: per chunk, its blocks one after the other, every pair on each block.
    std::vector<double> dot(static_cast<size_t>(chunks) * P, 0.0), distance(dot.size(), 0.0), mass(dot.size(), 0.0);
    parallel_for(chunks, threads, [&](int64_t c) {
        const int64_t first_block = c * blocks / chunks, last_block = (c + 1) * blocks / chunks;
        const size_t base = static_cast<size_t>(c) * P;
        for (int64_t k = first_block; k < last_block; ++k) {
            const size_t first = static_cast<size_t>(k * block);
            const size_t last = std::min(maps.rows.size(), first + static_cast<size_t>(block));
            for (size_t n = 0; n < P; ++n)
                sum_pair_rows(maps, pairs.first[n], pairs.second[n], first, last, dot[base + n], distance[base + n],
                              mass[base + n]);
        }
    });

    // Step 2: the chunks' partial sums in chunk order.
    PairSums sums{HeadMatrix(N, 0.0), HeadMatrix(N, 0.0), std::vector<double>(static_cast<size_t>(N), 0.0)};
    for (int64_t c = 0; c < chunks; ++c)
        for (size_t n = 0; n < P; ++n) {
            const size_t at = static_cast<size_t>(c) * P + n;
            const int64_t a = pairs.first[n], b = pairs.second[n];
            sums.dot.at(a, b) += dot[at];
            sums.distance.at(a, b) += distance[at];
            sums.mass[static_cast<size_t>(a)] += mass[at];
        }
    return sums;
}

struct PairSimilarity {
    double correlation, cosine, js_distance;
};

// a <= b, both summed with themselves and (a, b) with each other.
PairSimilarity finish_pair(const PairSums& sums, const MapSet& maps, int64_t a, int64_t b) {
    const double entries = std::max(maps.visible_entries, 1.0);
    auto variance = [&](int64_t h) {
        const double s = sums.mass[static_cast<size_t>(h)], q = sums.dot.at(h, h);
        const double v = q - s * s / entries;
        return v > 1e-10 * q ? v : 0.0;  // rounding residue of a constant map counts as constant
    };
    const double va = variance(a), vb = variance(b);
    const double cov = sums.dot.at(a, b) - sums.mass[static_cast<size_t>(a)] * sums.mass[static_cast<size_t>(b)] / entries;
    const double norms = std::sqrt(sums.dot.at(a, a) * sums.dot.at(b, b));
    PairSimilarity out;
    // Constant maps: every visible entry of a row-stochastic map that is constant equals 1 / V, so
    // two constant maps over one visibility are identical (1); a constant and a varying map: 0.
    if (a == b || (va == 0 && vb == 0)) out.correlation = 1.0;
    else out.correlation = va > 0 && vb > 0 ? std::clamp(cov / std::sqrt(va * vb), -1.0, 1.0) : 0.0;
    out.cosine = norms > 0 ? std::min(1.0, sums.dot.at(a, b) / norms) : undefined;
    out.js_distance = maps.rows.empty() ? undefined : sums.distance.at(a, b) / static_cast<double>(maps.rows.size());
    return out;
}

}  // namespace

MapSimilarities attention_map_similarities(const std::vector<const LayerResult*>& layers, int threads) {
    MapSet maps;
    collect_maps(maps, layers, layers.at(0)->visibility);
    const int64_t N = static_cast<int64_t>(maps.heads.size());
    std::vector<std::vector<int64_t>> partners(static_cast<size_t>(N));
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a; b < N; ++b) partners[static_cast<size_t>(a)].push_back(b);
    const PairSums sums = sum_pairs(maps, partners, threads);
    MapSimilarities out{HeadMatrix(N), HeadMatrix(N), HeadMatrix(N)};
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a; b < N; ++b) {
            const PairSimilarity p = finish_pair(sums, maps, a, b);
            out.correlation.at(a, b) = out.correlation.at(b, a) = p.correlation;
            out.cosine.at(a, b) = out.cosine.at(b, a) = p.cosine;
            out.js_distance.at(a, b) = out.js_distance.at(b, a) = p.js_distance;
        }
    return out;
}

PairedSimilarities paired_map_similarities(const std::vector<const LayerResult*>& first,
                                           const std::vector<const LayerResult*>& second, int threads) {
    MapSet maps;
    collect_maps(maps, first, first.at(0)->visibility);
    const int64_t N = static_cast<int64_t>(maps.heads.size());
    collect_maps(maps, second, first.at(0)->visibility);
    if (static_cast<int64_t>(maps.heads.size()) != 2 * N)
        throw Error(ErrorKind::internal, "paired_map_similarities: the two sides have different head counts");
    std::vector<std::vector<int64_t>> partners(static_cast<size_t>(2 * N));
    for (int64_t n = 0; n < N; ++n) {
        partners[static_cast<size_t>(n)] = {n, N + n};
        partners[static_cast<size_t>(N + n)] = {N + n};
    }
    const PairSums sums = sum_pairs(maps, partners, threads);
    PairedSimilarities out;
    for (int64_t n = 0; n < N; ++n) {
        const PairSimilarity p = finish_pair(sums, maps, n, N + n);
        out.correlation.push_back(p.correlation);
        out.cosine.push_back(p.cosine);
        out.js_distance.push_back(p.js_distance);
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
