// Row kernels of the attention-map similarities (see map_row_kernels.hpp).
#include "map_row_kernels.hpp"

#include <bit>
#include <cmath>
#include <type_traits>

#include "fast_log.hpp"

namespace attn_viz {

namespace {

constexpr int lanes = 16;
constexpr float ln2 = 0.693147180559945f;

float x_ln_x(float x) { return x * fast_ln(x); }  // 0 at x == 0: fast_ln(0) is finite

// sum_k w^k / (2k (2k - 1)), k = 1..10, for w = u^2 <= 1/4: the series of ln2_minus_entropy,
// which reaches float precision there with ten terms (Horner on the coefficients).
float ln2_minus_entropy_series(float w) {
    return w * (1.0f / 2 +
                w * (1.0f / 12 +
                     w * (1.0f / 30 +
                          w * (1.0f / 56 +
                               w * (1.0f / 90 + w * (1.0f / 132 +
                                                     w * (1.0f / 182 +
                                                          w * (1.0f / 240 + w * (1.0f / 306 + w * (1.0f / 380))))))))));
}

// ln 2 + r ln r + s ln s, the entropy a split r : s of one entry's mass falls short of ln 2, for
// r = (1 + u) / 2 and s = (1 - u) / 2. It equals sum_k u^(2k) / (2k (2k - 1)), k >= 1, a series of
// positive terms. Near u = 0, where the logarithms would cancel to nothing, the series is used
// (|u| <= 1/2); beyond, the logarithms, which cancel there by a factor of at most 5.3. Both are
// computed and one is selected.
float ln2_minus_entropy(float u, float r, float s) {
    const float w = u * u;
    const float series = ln2_minus_entropy_series(w);
    const float logs = ln2 + x_ln_x(r) + x_ln_x(s);
    const int32_t near_half = w <= 0.25f ? -1 : 0;  // selected on the bits, so loops stay branch-free
    return std::bit_cast<float>((std::bit_cast<int32_t>(series) & near_half) |
                                (std::bit_cast<int32_t>(logs) & ~near_half));
}

}  // namespace

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] RowSelf sum_self_row(const float* p, int64_t keys,
                                                                                    float* p_ln_p) {
    float square[lanes] = {}, mass[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes)
        for (int l = 0; l < lanes; ++l) {
            const float x = p[j + l];
            square[l] += x * x, mass[l] += x;
            p_ln_p[j + l] = x_ln_x(x);
        }
    RowSelf sums;
    for (; j < keys; ++j) {
        sums.square += static_cast<double>(p[j]) * p[j], sums.mass += p[j];
        p_ln_p[j] = x_ln_x(p[j]);
    }
    for (int l = 0; l < lanes; ++l) sums.square += square[l], sums.mass += mass[l];
    return sums;
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] RowPair compare_rows(const float* p, const float* q,
                                                                                    const float* p_ln_p,
                                                                                    const float* q_ln_q, int64_t keys) {
    // Entry j's share of 2 ln 2 JSD; masked to exactly 0 where the weights are equal (compared on
    // the bits, so the loop has no floating-point branch).
    auto entry = [&](int64_t k) {
        const float m = 0.5f * (p[k] + q[k]);
        const float e = p_ln_p[k] + q_ln_q[k] - 2.0f * x_ln_x(m);
        const int32_t differ = std::bit_cast<int32_t>(p[k]) != std::bit_cast<int32_t>(q[k]) ? -1 : 0;
        return std::bit_cast<float>(std::bit_cast<int32_t>(e) & differ);
    };
    float dot[lanes] = {}, divergence[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes)
        for (int l = 0; l < lanes; ++l) {
            dot[l] += p[j + l] * q[j + l];
            divergence[l] += entry(j + l);
        }
    RowPair sums;
    for (; j < keys; ++j) {
        sums.dot += static_cast<double>(p[j]) * q[j];
        sums.divergence += entry(j);
    }
    for (int l = 0; l < lanes; ++l) sums.dot += dot[l], sums.divergence += divergence[l];
    sums.divergence /= 2.0 * std::log(2.0);
    return sums;
}

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] RowPair compare_rows_by_ratio(const float* p,
                                                                                             const float* q,
                                                                                             int64_t keys) {
    // Entry j's share of 2 ln 2 JSD from its split u = (p - q) / (p + q), and whether |u| > 1/2.
    // With series_only (a std::bool_constant) the series stands for the bracket everywhere, else
    // ln2_minus_entropy selects the series or the logarithms on that same test.
    auto entry = [](float a, float b, auto series_only, bool& wide) {
        const float total = a + b, inverse = 1.0f / (total + 1e-30f);  // every ratio 0 when both are 0
        const float u = (a - b) * inverse;                             // a - b is exact when a and b are close
        wide = u * u > 0.25f;
        if constexpr (decltype(series_only)::value) return total * ln2_minus_entropy_series(u * u);
        return total * ln2_minus_entropy(u, a * inverse, b * inverse);
    };
    // Pass 1 takes the series alone and counts the entries where it does not stand for the
    // bracket; near-uniform rows have none, and pass 1 is then exactly what pass 2 would give. A
    // row with any takes pass 2, with both forms per entry.
    auto sum = [&](auto series_only, float& wide) {
        float dot[lanes] = {}, divergence[lanes] = {}, wide_lanes[lanes] = {};
        int64_t j = 0;
        for (; j + lanes <= keys; j += lanes)
            for (int l = 0; l < lanes; ++l) {
                bool beyond = false;
                dot[l] += p[j + l] * q[j + l];
                divergence[l] += entry(p[j + l], q[j + l], series_only, beyond);
                wide_lanes[l] += beyond ? 1.0f : 0.0f;
            }
        RowPair sums;
        for (; j < keys; ++j) {
            bool beyond = false;
            sums.dot += static_cast<double>(p[j]) * q[j];
            sums.divergence += entry(p[j], q[j], series_only, beyond);
            wide += beyond ? 1.0f : 0.0f;
        }
        for (int l = 0; l < lanes; ++l) sums.dot += dot[l], sums.divergence += divergence[l], wide += wide_lanes[l];
        sums.divergence /= 2.0 * std::log(2.0);  // mean of the two KL terms, in bits
        return sums;
    };
    float wide = 0;
    const RowPair by_series = sum(std::true_type{}, wide);
    if (wide == 0) return by_series;
    return sum(std::false_type{}, wide);
}

}  // namespace attn_viz
