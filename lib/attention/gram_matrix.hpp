// Gram matrices on oneDNN, and the inner products read off them in double: of two float rows,
// and of two square blocks of two matrices, which is how head-pair similarities come out of
// Gram matrices: <A_a B_a^T, A_b B_b^T>_F = sum((A_a^T A_b) .* (B_a^T B_b))
// (weight_similarity.cpp, head_output_shares.cpp).
#pragma once

#include <cstdint>

#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// Rows of a Gram matrix computed per product: the upper triangle is computed a band of this many
// rows at a time and mirrored, (n + band) / 2n of the products' work for n vectors.
inline constexpr int64_t gram_band_rows = 512;

// Which entries of a Gram matrix gram() sets: all of them, exactly symmetric; or only those on and
// above the diagonal (the rest left uninitialised), for readers of i <= j alone, who then do not
// wait for the mirror (25 ms of a 4096-wide Gram on one thread).
enum class GramFill { symmetric, upper_triangle };

// m: [rows, cols] -> the inner products of its columns (m^T m, [cols, cols]) or, with
// `of_rows`, of its rows (m m^T, [rows, rows]), as `fill` says; on oneDNN, the transpose a
// strided view.
Tensor gram(OnednnBackend& backend, const Tensor& m, bool of_rows, GramFill fill = GramFill::symmetric);

// a, b: [n] -> sum a .* b, in double.
double dot_in_double(const float* a, const float* b, int64_t n);

// first: [n1, m1], second: [n2, m2]. The sum over x, y < r of first[row_a + x, col_b + y] *
// second[row_c + x, col_d + y], in double.
double block_inner(const Tensor& first, int64_t row_a, int64_t col_b, const Tensor& second, int64_t row_c,
                   int64_t col_d, int64_t r);

// first, second: [n, n] symmetric, of which only the upper triangles are read. block_inner of
// their diagonal r x r blocks at (start, start): the sum over x, y < r of first[i, j] *
// second[i, j], i = start + x, j = start + y, in double.
double diagonal_block_inner(const Tensor& first, const Tensor& second, int64_t start, int64_t r);

}  // namespace attn_viz
