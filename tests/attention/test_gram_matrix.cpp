// Gram matrices (gram_matrix.hpp) against the inner products in double: of rows and of columns,
// for fewer vectors than a band of rows, exactly one band, and bands with a ragged last one.
#include <cmath>

#include <doctest/doctest.h>

#include "gram_matrix.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("unit") {

TEST_CASE("gram gives every inner product of the rows or columns, exactly symmetric, across bands of rows") {
    OnednnBackend backend;
    // [n vectors, k elements each]: one vector, odd counts, one band, a band and one, several bands.
    for (const int64_t n : {int64_t{1}, int64_t{7}, gram_band_rows, gram_band_rows + 1, 2 * gram_band_rows + 77})
        for (const int64_t k : {1, 33})
            for (const bool of_rows : {false, true}) {
                CAPTURE(n);
                CAPTURE(k);
                CAPTURE(of_rows);
                const Tensor m = random_tensor(of_rows ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
                const auto element = [&](int64_t vector, int64_t x) {
                    return double(of_rows ? m.data[vector * k + x] : m.data[x * n + vector]);
                };
                const Tensor g = gram(backend, m, of_rows);
                REQUIRE(g.shape == std::vector<int64_t>{n, n});
                double worst = 0;
                bool symmetric = true;
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        double want = 0, scale = 0;
                        for (int64_t x = 0; x < k; ++x) {
                            want += element(i, x) * element(j, x);
                            scale += std::fabs(element(i, x) * element(j, x));
                        }
                        worst = std::max(worst, std::fabs(g.data[i * n + j] - want) / std::max(scale, 1e-30));
                        symmetric = symmetric && g.data[i * n + j] == g.data[j * n + i];
                    }
                CHECK(worst < 1e-6);
                CHECK(symmetric);
            }
}

TEST_CASE("gram's upper triangle alone is the symmetric one's, and diagonal blocks read from it sum as the full ones") {
    OnednnBackend backend;
    for (const int64_t n : {int64_t{5}, gram_band_rows + 37}) {
        CAPTURE(n);
        const Tensor m = random_tensor({19, n}), other = random_tensor({n, 23});
        const Tensor full = gram(backend, m, false), upper = gram(backend, m, false, GramFill::upper_triangle);
        const Tensor second = gram(backend, other, true);
        bool same = true;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = i; j < n; ++j) same = same && upper.data[i * n + j] == full.data[i * n + j];
        CHECK(same);
        // Blocks of odd size, one across the bands' boundary when there are two bands.
        for (const auto& [start, r] :
             {std::pair<int64_t, int64_t>{0, 1}, {1, 3}, {n - 3, 3}, {std::min(n - 5, gram_band_rows - 2), 5}}) {
            CAPTURE(start);
            CAPTURE(r);
            double want = 0;
            for (int64_t x = 0; x < r; ++x)
                for (int64_t y = 0; y < r; ++y)
                    want += double(full.data[(start + x) * n + start + y]) * second.data[(start + x) * n + start + y];
            CHECK(diagonal_block_inner(upper, second, start, r) == doctest::Approx(want).epsilon(1e-12));
            CHECK(block_inner(full, start, start, second, start, start, r) == doctest::Approx(want).epsilon(1e-12));
        }
    }
}

}  // TEST_SUITE("unit")
