// Row kernels of the attention-map similarities (see map_row_kernels.hpp).
#include "map_row_kernels.hpp"

#include <bit>
#include <cmath>

#include "fast_log.hpp"

namespace attn_viz {

namespace {

constexpr int lanes = 16;
constexpr float ln2 = 0.693147180559945f;

float x_ln_x(float x) { return x * fast_ln(x); }  // 0 at x == 0: fast_ln(0) is finite

}  // namespace

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] RowSelf sum_self_row(const float* p, int64_t keys, float* p_ln_p) {
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
                                                                          const float* p_ln_p, const float* q_ln_q,
                                                                          int64_t keys) {
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

[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] double divergence_by_ratio(const float* p, const float* q,
                                                                                int64_t keys) {
    auto entry = [](float a, float b) {
        const float total = a + b;
        const float r = a / (total + 1e-30f), s = 1.0f - r;  // 0 when both are 0
        return total * (ln2 + r * fast_ln(r) + s * fast_ln(s));
    };
    float divergence[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes)
        for (int l = 0; l < lanes; ++l) divergence[l] += entry(p[j + l], q[j + l]);
    double sum = 0;
    for (; j < keys; ++j) sum += entry(p[j], q[j]);
    for (int l = 0; l < lanes; ++l) sum += divergence[l];
    return sum / (2.0 * std::log(2.0));  // mean of the two KL terms, in bits
}

}  // namespace attn_viz
