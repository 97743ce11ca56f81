// The blocked Cholesky factorisation (cholesky.hpp).
#include "cholesky.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace attn_viz {

namespace {

// Eight doubles: one AVX-512 register, two AVX2 ones.
using f64x8 = double __attribute__((vector_size(64)));

}  // namespace

// Right-looking by panels of 8 columns, so that most of the n^3/6 multiply-adds run in a
// register-blocked update of 4 x 8 entries (8 multiply-adds each per load and store) rather than
// along rows. Compiled for the machine's vector width.
[[gnu::target_clones("avx512f", "avx2", "default")]] bool cholesky_in_place(std::vector<double>& a, int64_t n) {
    constexpr int64_t panel = 8, width = 8, tile_rows = 4;
    // The panel's columns of L, each contiguous and padded with zeros so that a tile may read
    // past row n. Only rows from the panel's diagonal down are read.
    const int64_t stride = n + width;
    std::vector<double> columns(static_cast<size_t>(panel * stride));
    for (int64_t first = 0; first < n; first += panel) {
        const int64_t end = std::min(n, first + panel);
        // Step 1: copy the panel's lower part out into contiguous columns, row by row (a's rows
        // are contiguous, its columns 8n bytes apart).
        for (int64_t i = first; i < n; ++i)
            for (int64_t j = first; j < std::min(end, i + 1); ++j) columns[(j - first) * stride + i] = a[i * n + j];
        // Step 2: factor the panel: each column is final once the panel's earlier ones are
        // subtracted from it.
        for (int64_t j = first; j < end; ++j) {
            double* column_j = columns.data() + (j - first) * stride;
            if (!(column_j[j] > 0)) return false;
            const double l_jj = std::sqrt(column_j[j]), inverse = 1.0 / l_jj;
            column_j[j] = l_jj;
            for (int64_t i = j + 1; i < n; ++i) column_j[i] *= inverse;
            for (int64_t k = j + 1; k < end; ++k) {
                double* column_k = columns.data() + (k - first) * stride;
                const double l_kj = column_j[k];
                for (int64_t i = k; i < n; ++i) column_k[i] -= column_j[i] * l_kj;
            }
        }
        for (int64_t i = first; i < n; ++i)
            for (int64_t j = first; j < std::min(end, i + 1); ++j) a[i * n + j] = columns[(j - first) * stride + i];
        // Step 3: the lower triangle right of the panel loses the panel's product, a[i, k] -=
        // sum_j l_ij l_kj, by tiles of 4 rows x 8 columns summed in registers. Tiles that cross
        // the diagonal store only their entries on or below it.
        for (int64_t i0 = end; i0 < n; i0 += tile_rows) {
            const int64_t rows = std::min(tile_rows, n - i0);
            for (int64_t k0 = end; k0 < i0 + rows; k0 += width) {
                f64x8 sum[tile_rows] = {};
                for (int64_t j = 0; j < panel; ++j) {
                    const double* column = columns.data() + j * stride;
                    f64x8 l_k;
                    std::memcpy(&l_k, column + k0, sizeof l_k);
#pragma GCC unroll 4
                    for (int64_t r = 0; r < tile_rows; ++r) sum[r] += column[i0 + r] * l_k;
                }
                if (rows == tile_rows && k0 + width <= i0 + 1) {
                    for (int64_t r = 0; r < tile_rows; ++r) {
                        double* out = a.data() + (i0 + r) * n + k0;
                        f64x8 x;
                        std::memcpy(&x, out, sizeof x);
                        x -= sum[r];
                        std::memcpy(out, &x, sizeof x);
                    }
                } else {
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t c = 0; c < width && k0 + c <= i0 + r; ++c) a[(i0 + r) * n + k0 + c] -= sum[r][c];
                }
            }
        }
    }
    return true;
}

double half_log_det(const std::vector<double>& l, int64_t n) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) sum += std::log(l[k * n + k]);
    return sum;
}

std::vector<double> lower_inverse(const std::vector<double>& l, int64_t n) {
    std::vector<double> inverse(static_cast<size_t>(n * n), 0.0);
    for (int64_t c = 0; c < n; ++c) {
        inverse[c * n + c] = 1.0 / l[c * n + c];
        for (int64_t r = c + 1; r < n; ++r) {
            double x = 0;
            for (int64_t k = c; k < r; ++k) x -= l[r * n + k] * inverse[k * n + c];
            inverse[r * n + c] = x / l[r * n + r];
        }
    }
    return inverse;
}

}  // namespace attn_viz
