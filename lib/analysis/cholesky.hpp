// The Cholesky factorisation of small symmetric positive definite matrices in double (up to a few
// hundred rows: the [d_h, d_h] and [T, T] blocks of the output dependence), and what is read
// from the factor. Matrices are row-major std::vector<double>; only lower triangles are read.
#pragma once

#include <cstdint>
#include <vector>

namespace attn_viz {

// a: [n, n] symmetric (its lower triangle read) -> its Cholesky factor L (a = L L^T) in the lower
// triangle; the upper one is left as it was. False when a is not (numerically) positive definite:
// a pivot is not > 0 (or is NaN). a is then partly overwritten.
bool cholesky_in_place(std::vector<double>& a, int64_t n);

// l: [n, n] lower triangular with a positive diagonal -> sum_k ln l_kk = ln det(l l^T) / 2.
double half_log_det(const std::vector<double>& l, int64_t n);

// l: [n, n] lower triangular (its upper triangle not read), nonzero diagonal -> l^-1, lower
// triangular with zeros above the diagonal.
std::vector<double> lower_inverse(const std::vector<double>& l, int64_t n);

}  // namespace attn_viz
