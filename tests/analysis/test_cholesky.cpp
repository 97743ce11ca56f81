// The blocked Cholesky factorisation (cholesky.hpp) against the textbook column-at-a-time one in
// double, on random positive definite matrices of sizes inside one panel, at panel and tile
// boundaries and across many panels; and its refusals.
#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "cholesky.hpp"
#include "support.hpp"

using namespace attn_viz;

namespace {

// A random positive definite [n, n] matrix: X X^T / k + I for X [n, k] (k < n: the identity keeps
// it definite), with random values (not the expected zeros) above the diagonal, which no step may read.
std::vector<double> random_definite(int64_t n, int64_t k) {
    std::normal_distribution<double> normal;
    std::vector<double> x(static_cast<size_t>(n * k)), a(static_cast<size_t>(n * n));
    for (double& v : x) v = normal(test_support::rng());
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t t = 0; t < k; ++t) s += x[i * k + t] * x[j * k + t];
            a[i * n + j] = j <= i ? s / k + (i == j) : normal(test_support::rng());
        }
    return a;
}

// The column-at-a-time factorisation: l_jj = sqrt(a_jj - sum_k l_jk^2), l_ij = (a_ij - sum_k
// l_ik l_jk) / l_jj.
std::vector<double> reference_factor(const std::vector<double>& a, int64_t n) {
    std::vector<double> l(static_cast<size_t>(n * n), 0.0);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = j; i < n; ++i) {
            double s = a[i * n + j];
            for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
            l[i * n + j] = i == j ? std::sqrt(s) : s / l[j * n + j];
        }
    return l;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("cholesky_in_place matches the column-at-a-time factor and leaves the upper triangle alone") {
    // One entry; inside one panel of 8; at and across panel (8) and tile (4 rows) boundaries;
    // many panels with a ragged last one, as the [T, T] and [d_h, d_h] blocks are.
    for (const int64_t n : {1, 2, 7, 8, 9, 12, 13, 16, 17, 31, 64, 67, 130}) {
        CAPTURE(n);
        const std::vector<double> a = random_definite(n, std::max<int64_t>(1, n / 2));
        const std::vector<double> want = reference_factor(a, n);
        std::vector<double> got = a;
        REQUIRE(cholesky_in_place(got, n));
        double worst = 0, worst_product = 0;
        bool upper_kept = true;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                if (j > i) {
                    upper_kept = upper_kept && got[i * n + j] == a[i * n + j];
                    continue;
                }
                worst = std::max(worst, std::fabs(got[i * n + j] - want[i * n + j]));
                double product = 0;  // (L L^T)_ij against a_ij
                for (int64_t k = 0; k <= j; ++k) product += got[i * n + k] * got[j * n + k];
                worst_product = std::max(worst_product, std::fabs(product - a[i * n + j]));
            }
        CHECK(upper_kept);
        CHECK(worst < 1e-12);  // the entries are O(1) and the matrix well conditioned (>= I)
        CHECK(worst_product < 1e-12);
        double want_log_det = 0;
        for (int64_t k = 0; k < n; ++k) want_log_det += std::log(want[k * n + k]);
        CHECK(half_log_det(got, n) == doctest::Approx(want_log_det).epsilon(1e-12));
        const std::vector<double> inverse = lower_inverse(got, n);
        double worst_identity = 0;  // L^-1 L = I
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double s = 0;
                for (int64_t k = 0; k < n; ++k) s += inverse[i * n + k] * (k >= j ? got[k * n + j] : 0.0);
                worst_identity = std::max(worst_identity, std::fabs(s - (i == j)));
            }
        CHECK(worst_identity < 1e-10);
    }
}

TEST_CASE("cholesky_in_place refuses matrices that are not positive definite, in any panel") {
    // A definite matrix with one diagonal entry made negative: its pivot can only be smaller.
    for (const auto& [n, bad] : {std::pair<int64_t, int64_t>{1, 0}, {9, 3}, {20, 8}, {67, 66}, {67, 40}}) {
        CAPTURE(n);
        CAPTURE(bad);
        std::vector<double> a = random_definite(n, n);
        a[bad * n + bad] = -1;
        CHECK_FALSE(cholesky_in_place(a, n));
        std::vector<double> with_nan = random_definite(n, n);
        with_nan[bad * n + (bad > 0 ? bad - 1 : 0)] = NAN;
        CHECK_FALSE(cholesky_in_place(with_nan, n));
    }
}

}  // TEST_SUITE("analysis")
