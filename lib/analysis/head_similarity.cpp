#include "head_similarity.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "map_row_kernels.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

// Every head's map over the rows that count, from layers sharing one visibility.
struct MapSet {
    std::vector<const float*> heads;  // each [T, S]
    std::vector<int64_t> rows;        // rows with at least one visible key
    std::vector<double> uniform;      // per entry of rows: 1 / V_i, uniform attention's weight on each visible key
    int64_t keys = 0;                 // S
    bool causal = false;              // keys past the diagonal are zero in every map
    double visible_entries = 0;       // sum over rows of visible keys
    double uniform_square = 0;        // sum over rows of 1 / V_i: uniform attention's sum of squares
};

// Appends `layers`' heads to `maps` (rows and keys from the first call's visibility `vis`).
// Layers may differ in their sliding windows (Qwen2's first max_window_layers see every earlier
// key): the rows count the keys the widest of them sees, the others' maps are zero outside theirs.
void collect_maps(MapSet& maps, const std::vector<const LayerResult*>& layers, Visibility vis) {
    const int64_t T = vis.queries, S = vis.keys;
    for (const LayerResult* layer : layers) {
        const int64_t window = layer->visibility.window;
        if (vis.window != 0 && (window == 0 || window > vis.window)) vis.window = window;
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
        if (seen > 0) {
            maps.rows.push_back(i);
            maps.uniform.push_back(1.0 / static_cast<double>(seen));
            maps.uniform_square += 1.0 / static_cast<double>(seen);
        }
        maps.visible_entries += static_cast<double>(seen);
    }
}

struct PairSums {
    HeadMatrix dot, distance;           // at (a, b) for every b in partners[a]
    std::vector<double> mass;           // per head
    std::vector<double> uniform_share;  // per head: sum over rows of the row's mass / V_i
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

// Rows per block: all heads' rows of one block and their x ln x together stay within about
// 1 MB (the L2 of one core).
int64_t rows_per_block(int64_t heads, int64_t keys) {
    constexpr int64_t cache_bytes = int64_t{1} << 20;
    const int64_t bytes_per_row = std::max<int64_t>(1, 2 * heads * keys * static_cast<int64_t>(sizeof(float)));
    return std::clamp<int64_t>(cache_bytes / bytes_per_row, 1, 64);
}

// Divergences below this (bits) are recomputed in the ratio form: the one-log form's absolute
// error (about 1e-7) would reach the JS distance as 1e-7 / (2 sqrt(divergence)), a relative error
// of up to 9e-6 just above 0.01 (measured), 1.3e-6 above 0.05. Recomputing below 0.05 instead of
// 0.01 did not change the statistics' time measurably (12 heads, T = 1024).
constexpr double small_divergence = 5e-2;

// Per-chunk partial sums, indexed by pair (dot, distance) or head (square, mass, uniform_share),
// and per pair the form its next block of rows is summed in (by_ratio, below).
struct ChunkSums {
    std::vector<double> dot, distance;                // [P]
    std::vector<double> square, mass, uniform_share;  // [N]
    std::vector<uint8_t> by_ratio;                    // [P]
};

// Adds the rows maps.rows[first, last) to `sums`: first every head's own sums and x ln x
// (p_ln_p: [N, rows in block, S]), then every pair a != b on them.
// A pair's rows are summed in one of two forms, chosen per block: the one-log form, with each row
// whose divergence comes out below small_divergence recomputed in the ratio form, or the ratio
// form for every row. The ratio form is taken when the pair's previous block in this chunk had a
// mean divergence below small_divergence: near-uniform and near-duplicate heads have every row
// there, and the one-log pass before each recomputation was 29% of their pairs' work (measured). Either way each
// row's divergence is the ratio form's (within about 1e-6 of itself) or the one-log form's at
// small_divergence or more (its 1e-7 absolute error then moves the row's distance by at most
// 1.3e-6 of itself), the same bound as deciding row by row. The choice depends on the chunk's
// blocks only, never on the thread count.
void sum_block(const MapSet& maps, const PairList& pairs, size_t first, size_t last, std::vector<float>& p_ln_p,
               ChunkSums& sums) {
    const int64_t N = static_cast<int64_t>(maps.heads.size()), S = maps.keys;
    const size_t rows = last - first;
    p_ln_p.resize(static_cast<size_t>(N) * rows * static_cast<size_t>(S));
    auto row_end = [&](int64_t i) { return maps.causal ? std::min(S, i + 1) : S; };  // zeros past the diagonal
    auto logs_of = [&](int64_t h, size_t n) {
        return p_ln_p.data() + (static_cast<size_t>(h) * rows + n) * static_cast<size_t>(S);
    };
    for (int64_t h = 0; h < N; ++h)
        for (size_t n = 0; n < rows; ++n) {
            const int64_t i = maps.rows[first + n];
            const RowSelf row = sum_self_row(maps.heads[static_cast<size_t>(h)] + i * S, row_end(i), logs_of(h, n));
            sums.square[static_cast<size_t>(h)] += row.square;
            sums.mass[static_cast<size_t>(h)] += row.mass;
            sums.uniform_share[static_cast<size_t>(h)] += row.mass * maps.uniform[first + n];
        }
    for (size_t k = 0; k < pairs.first.size(); ++k) {
        const int64_t a = pairs.first[k], b = pairs.second[k];
        if (a == b) continue;
        const bool by_ratio = sums.by_ratio[k] != 0;
        double block_divergence = 0;
        for (size_t n = 0; n < rows; ++n) {
            const int64_t i = maps.rows[first + n];
            const float* p = maps.heads[static_cast<size_t>(a)] + i * S;
            const float* q = maps.heads[static_cast<size_t>(b)] + i * S;
            RowPair row = by_ratio ? compare_rows_by_ratio(p, q, row_end(i))
                                   : compare_rows(p, q, logs_of(a, n), logs_of(b, n), row_end(i));
            if (!by_ratio && row.divergence < small_divergence)
                row.divergence = compare_rows_by_ratio(p, q, row_end(i)).divergence;
            block_divergence += row.divergence;
            sums.dot[k] += row.dot;
            sums.distance[k] += std::sqrt(std::clamp(row.divergence, 0.0, 1.0));
        }
        sums.by_ratio[k] = block_divergence < small_divergence * static_cast<double>(rows) ? 1 : 0;
    }
}

// partners[a]: the heads b >= a to compare with a, always including a itself (for the norms).
// Row blocks are the outer loop: every pair is summed on one block's rows while all heads' rows
// of that block sit in cache, so each map is read from memory once (not once per partner), and
// each row's x ln x is computed once per head (not once per pair).
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

    // Step 1: per chunk, its blocks one after the other.
    std::vector<ChunkSums> partial(static_cast<size_t>(chunks));
    parallel_for(
        chunks, threads,
        [&](int64_t c) {
            ChunkSums& sums = partial[static_cast<size_t>(c)];
            sums.dot.assign(P, 0.0), sums.distance.assign(P, 0.0);
            sums.square.assign(static_cast<size_t>(N), 0.0), sums.mass.assign(static_cast<size_t>(N), 0.0);
            sums.uniform_share.assign(static_cast<size_t>(N), 0.0);
            sums.by_ratio.assign(P, 0);  // a chunk's first block tries the one-log form
            std::vector<float> p_ln_p;
            for (int64_t k = c * blocks / chunks; k < (c + 1) * blocks / chunks; ++k) {
                const size_t first = static_cast<size_t>(k * block);
                sum_block(maps, pairs, first, std::min(maps.rows.size(), first + static_cast<size_t>(block)), p_ln_p,
                          sums);
            }
        },
        static_cast<int64_t>(maps.rows.size() * P) * maps.keys / std::max<int64_t>(chunks, 1));

    // Step 2: the chunks' partial sums in chunk order.
    PairSums sums{HeadMatrix(N, 0.0), HeadMatrix(N, 0.0), std::vector<double>(static_cast<size_t>(N), 0.0),
                  std::vector<double>(static_cast<size_t>(N), 0.0)};
    for (const ChunkSums& chunk : partial) {
        for (size_t k = 0; k < P; ++k) {
            sums.dot.at(pairs.first[k], pairs.second[k]) += chunk.dot[k];
            sums.distance.at(pairs.first[k], pairs.second[k]) += chunk.distance[k];
        }
        for (int64_t h = 0; h < N; ++h) {
            sums.dot.at(h, h) += chunk.square[static_cast<size_t>(h)];
            sums.mass[static_cast<size_t>(h)] += chunk.mass[static_cast<size_t>(h)];
            sums.uniform_share[static_cast<size_t>(h)] += chunk.uniform_share[static_cast<size_t>(h)];
        }
    }
    return sums;
}

struct PairSimilarity {
    double correlation, cosine, js_distance, centred_correlation;
};

// Departures below this share of a map's sum of squares count as none: the centred sums come from
// float-lane products (relative error about 1e-7), so a uniform map's residue stays below it.
constexpr double no_departure = 1e-6;

// The correlation of the departures d = a_ij - 1/V_i from uniform attention: sum d_a d_b over
// the visible entries is dot - u_a - u_b + w (u: sum over rows of the row's mass / V_i, w: sum
// over rows of 1 / V_i), the same expansion for each map's own sum of squares.
double centred_correlation(const PairSums& sums, const MapSet& maps, int64_t a, int64_t b) {
    const double w = maps.uniform_square;
    const auto u = [&](int64_t h) { return sums.uniform_share[static_cast<size_t>(h)]; };
    const auto departure = [&](int64_t h) {
        const double square = sums.dot.at(h, h), d = square - 2 * u(h) + w;
        return d > no_departure * square ? d : 0.0;
    };
    const double da = departure(a), db = departure(b);
    if (a == b || (da == 0 && db == 0)) return 1.0;  // two uniform maps over one visibility are equal
    if (da == 0 || db == 0) return 0.0;
    return std::clamp((sums.dot.at(a, b) - u(a) - u(b) + w) / std::sqrt(da * db), -1.0, 1.0);
}

// a <= b, both summed with themselves and (a, b) with each other.
PairSimilarity finish_pair(const PairSums& sums, const MapSet& maps, int64_t a, int64_t b) {
    const double entries = std::max(maps.visible_entries, 1.0);
    auto variance = [&](int64_t h) {
        const double s = sums.mass[static_cast<size_t>(h)], q = sums.dot.at(h, h);
        const double v = q - s * s / entries;
        return v > 1e-10 * q ? v : 0.0;  // rounding residue of a constant map counts as constant
    };
    const double va = variance(a), vb = variance(b);
    const double cov =
        sums.dot.at(a, b) - sums.mass[static_cast<size_t>(a)] * sums.mass[static_cast<size_t>(b)] / entries;
    const double norms = std::sqrt(sums.dot.at(a, a) * sums.dot.at(b, b));
    PairSimilarity out;
    // Constant maps: every visible entry of a row-stochastic map that is constant equals 1 / V, so
    // two constant maps over one visibility are identical (1); a constant and a varying map: 0.
    if (a == b || (va == 0 && vb == 0))
        out.correlation = 1.0;
    else
        out.correlation = va > 0 && vb > 0 ? std::clamp(cov / std::sqrt(va * vb), -1.0, 1.0) : 0.0;
    out.cosine = norms > 0 ? std::min(1.0, sums.dot.at(a, b) / norms) : NAN;
    out.js_distance = maps.rows.empty() ? NAN : sums.distance.at(a, b) / static_cast<double>(maps.rows.size());
    out.centred_correlation = centred_correlation(sums, maps, a, b);
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
    MapSimilarities out{HeadMatrix(N), HeadMatrix(N), HeadMatrix(N), HeadMatrix(N)};
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a; b < N; ++b) {
            const PairSimilarity p = finish_pair(sums, maps, a, b);
            out.correlation.at(a, b) = out.correlation.at(b, a) = p.correlation;
            out.cosine.at(a, b) = out.cosine.at(b, a) = p.cosine;
            out.js_distance.at(a, b) = out.js_distance.at(b, a) = p.js_distance;
            out.centred_correlation.at(a, b) = out.centred_correlation.at(b, a) = p.centred_correlation;
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
                        norms > 0 ? std::clamp(gram.data[a * H + b] / norms, -1.0, 1.0) : NAN;
                }
        offset += H;
    }
    return cosine;
}

}  // namespace attn_viz
