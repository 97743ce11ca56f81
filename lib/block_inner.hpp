// The Frobenius inner product of two square blocks of two matrices: how head-pair similarities
// are read off Gram matrices, <A_a B_a^T, A_b B_b^T>_F = sum((A_a^T A_b) .* (B_a^T B_b))
// (weight_similarity.cpp, head_output_shares.cpp).
#pragma once

#include <cstdint>

#include "tensor.hpp"

namespace attn_viz {

// first: [n1, m1], second: [n2, m2]. The sum over x, y < r of first[row_a + x, col_b + y] *
// second[row_c + x, col_d + y], accumulated in double in eight lanes so the inner loop vectorizes.
inline double block_inner(const Tensor& first, int64_t row_a, int64_t col_b, const Tensor& second, int64_t row_c,
                          int64_t col_d, int64_t r) {
    constexpr int lanes = 8;
    const int64_t n1 = first.dim(1), n2 = second.dim(1);
    double part[lanes] = {}, sum = 0;
    for (int64_t x = 0; x < r; ++x) {
        const float* a = first.ptr() + (row_a + x) * n1 + col_b;
        const float* b = second.ptr() + (row_c + x) * n2 + col_d;
        int64_t y = 0;
        for (; y + lanes <= r; y += lanes)
            for (int l = 0; l < lanes; ++l) part[l] += static_cast<double>(a[y + l]) * b[y + l];
        for (; y < r; ++y) sum += static_cast<double>(a[y]) * b[y];
    }
    for (double p : part) sum += p;
    return sum;
}

}  // namespace attn_viz
