// One pass per row instead of three (mask, margin scan, softmax): at T = 2048 the [H, T, S] map
// is 268 MB, and each pass over it costs about as much as the score product itself.
#include "masked_softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "error.hpp"
#include "fast_exp.hpp"
#include "parallel_for.hpp"

namespace attn_viz {
namespace {

constexpr int lanes = 16;  // independent accumulators, so the loops vectorize without reassociation

// Each row kernel is compiled three times and picked by CPUID when the program loads: AVX-512;
// x86-64-v3 (AVX2 with FMA, every AVX2 server CPU: a bare "avx2" clone has no FMA and made the
// e^x loop 1.4x slower there); and plain x86-64. See CMakeLists.txt for the flag that lets the
// non-AVX-512 clones vectorize that loop at all.
constexpr float neg_inf = -std::numeric_limits<float>::infinity();

struct TopTwo {
    float top = neg_inf, second = neg_inf;  // second == top when the maximum is repeated
};

// row: [n]. The two largest values (counting a repeated maximum twice), per lane, then merged.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] TopTwo top_two(const float* row, int64_t n) {
    float top[lanes], second[lanes];
    std::fill_n(top, lanes, neg_inf);
    std::fill_n(second, lanes, neg_inf);
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes)
        for (int l = 0; l < lanes; ++l) {
            const float x = row[j + l];
            second[l] = std::max(second[l], std::min(top[l], x));
            top[l] = std::max(top[l], x);
        }
    for (; j < n; ++j) {
        second[0] = std::max(second[0], std::min(top[0], row[j]));
        top[0] = std::max(top[0], row[j]);
    }
    TopTwo best;
    for (int l = 0; l < lanes; ++l) {
        best.second = std::max({best.second, second[l], std::min(best.top, top[l])});
        best.top = std::max(best.top, top[l]);
    }
    return best;
}

// row: [n] -> e^(row - top) in place; returns their sum.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] float exponentiate(float* row, int64_t n, float top) {
    float sum[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes)
        for (int l = 0; l < lanes; ++l) {
            row[j + l] = fast_exp_nonpositive(row[j + l] - top);
            sum[l] += row[j + l];
        }
    for (; j < n; ++j) {
        row[j] = fast_exp_nonpositive(row[j] - top);
        sum[0] += row[j];
    }
    float total = 0;
    for (float s : sum) total += s;
    return total;
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void scale(float* row, int64_t n, float factor) {
    for (int64_t j = 0; j < n; ++j) row[j] *= factor;
}

}  // namespace

int64_t keys_seen(const Visibility& vis, int64_t first, int64_t count) {
    int64_t seen = 0;
    for (int64_t n = first; n < first + count && seen < vis.keys; ++n)
        seen = std::max(seen, vis.visible_end(n % vis.queries));
    return seen;
}

void masked_softmax(float* scores, int64_t first, int64_t count, int64_t row_keys, const Visibility& vis,
                    float* margin) {
    const int64_t T = vis.queries;
    if (row_keys < keys_seen(vis, first, count) || row_keys > vis.keys)
        throw Error(ErrorKind::internal,
                    fmt::format("masked_softmax: rows of {} keys for queries that see up to {} of {}", row_keys,
                                keys_seen(vis, first, count), vis.keys));
    const uint8_t* excluded = vis.key_excluded.empty() ? nullptr : vis.key_excluded.data();
#pragma omp parallel for schedule(static) if (count * row_keys > parallel_min_values)
    for (int64_t n = 0; n < count; ++n) {
        const int64_t i = (first + n) % T;
        float* row = scores + n * row_keys;
        // Step 1: keys [0, begin) (outside a sliding window) and [end, row_keys) (the causal
        // future) are zero, and left out of everything below; so is a row whose keys in between
        // are all padding (a query that sees no key).
        int64_t begin = vis.visible_begin(i), end = vis.visible_end(i);
        if (excluded && std::all_of(excluded + begin, excluded + end, [](uint8_t padding) { return padding != 0; }))
            end = begin;
        std::fill(row, row + begin, 0.0f);
        std::fill(row + end, row + row_keys, 0.0f);
        margin[n] = 0.0f;
        if (end <= begin) continue;
        float* keys = row + begin;
        const int64_t seen = end - begin;
        // Step 2: padding keys get -inf (so e^x = 0 and they are never a top score).
        if (excluded)
            for (int64_t j = begin; j < end; ++j)
                if (excluded[j]) row[j] = neg_inf;
        // Step 3: the margin, from the two largest scores (one visible key among padding: 0).
        const TopTwo best = top_two(keys, seen);
        const float gap = best.top - best.second;
        if (seen > 1 && std::isfinite(gap)) margin[n] = gap;
        // Step 4: softmax = e^(x - max) / sum, the sum taken over what was just written.
        const float sum = exponentiate(keys, seen, best.top);
        scale(keys, seen, 1.0f / sum);
    }
}

}  // namespace attn_viz
