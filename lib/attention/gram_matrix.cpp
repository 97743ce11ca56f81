#include "gram_matrix.hpp"

#include <algorithm>

#include "transpose.hpp"

namespace attn_viz {

Tensor gram(OnednnBackend& backend, const Tensor& m, bool of_rows, GramFill fill) {
    const int64_t rows = m.dim(0), cols = m.dim(1);
    const int64_t n = of_rows ? rows : cols, k = of_rows ? cols : rows;
    // Vector i (a row or a column of m) has its element x at m[i * vector_stride + x * element_stride].
    const int64_t vector_stride = of_rows ? cols : 1, element_stride = of_rows ? 1 : cols;
    Tensor g = Tensor::uninitialized({n, n});
    // Step 1: the upper triangle by bands of rows: vectors [i0, i0 + band) against [i0, n), one
    // product per band (the transpose a strided view of the same memory).
    const int64_t band = std::min(n, gram_band_rows);
    for (int64_t i0 = 0; i0 < n; i0 += band) {
        MatmulShape s;
        s.m = std::min(band, n - i0), s.k = k, s.n = n - i0;
        s.a_strides[0] = rows * cols, s.a_strides[1] = vector_stride, s.a_strides[2] = element_stride;
        s.w_strides[0] = rows * cols, s.w_strides[1] = element_stride, s.w_strides[2] = vector_stride;
        s.c_strides[0] = n * n, s.c_strides[1] = n, s.c_strides[2] = 1;
        const float* first = m.ptr() + i0 * vector_stride;
        backend.matmul(s, first, first, nullptr, g.ptr() + i0 * n + i0);
    }
    if (fill == GramFill::upper_triangle) return g;
    // Step 2: the lower triangle mirrored, so that g is exactly symmetric: each band's rows left
    // of its diagonal block are the transpose of the band's columns above it (by blocks: row by
    // row, the column-wise reads of a 4096-wide Gram took 92 ms), then the block's own triangle.
    for (int64_t i0 = band; i0 < n; i0 += band)
        transpose_into(g.ptr() + i0, i0, std::min(band, n - i0), n, g.ptr() + i0 * n, n);
    for (int64_t i0 = 0; i0 < n; i0 += band)
        for (int64_t i = i0 + 1; i < std::min(n, i0 + band); ++i)
            for (int64_t j = i0; j < i; ++j) g.data[i * n + j] = g.data[j * n + i];
    return g;
}

// Eight double lanes so the loop vectorizes (a single accumulator may not be reassociated).
[[gnu::target_clones("avx512f", "avx2", "default")]] double dot_in_double(const float* a, const float* b, int64_t n) {
    constexpr int lanes = 8;
    double part[lanes] = {}, sum = 0;
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes)
        for (int l = 0; l < lanes; ++l) part[l] += static_cast<double>(a[j + l]) * b[j + l];
    for (; j < n; ++j) sum += static_cast<double>(a[j]) * b[j];
    for (double p : part) sum += p;
    return sum;
}

double block_inner(const Tensor& first, int64_t row_a, int64_t col_b, const Tensor& second, int64_t row_c,
                   int64_t col_d, int64_t r) {
    const int64_t n1 = first.dim(1), n2 = second.dim(1);
    double sum = 0;
    for (int64_t x = 0; x < r; ++x)
        sum += dot_in_double(first.ptr() + (row_a + x) * n1 + col_b, second.ptr() + (row_c + x) * n2 + col_d, r);
    return sum;
}

double diagonal_block_inner(const Tensor& first, const Tensor& second, int64_t start, int64_t r) {
    const int64_t n1 = first.dim(1), n2 = second.dim(1);
    double diagonal = 0, above = 0;  // the entries below the diagonal repeat those above it
    for (int64_t i = start; i < start + r; ++i) {
        diagonal += static_cast<double>(first.data[i * n1 + i]) * second.data[i * n2 + i];
        above += dot_in_double(first.ptr() + i * n1 + i + 1, second.ptr() + i * n2 + i + 1, start + r - i - 1);
    }
    return diagonal + 2 * above;
}

}  // namespace attn_viz
