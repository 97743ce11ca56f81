// transposed (layer_weights.hpp): every entry moved, on shapes around its tile size.
#include <doctest/doctest.h>

#include "layer_weights.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

TEST_SUITE("unit") {

TEST_CASE("transposed moves entry (r, c) to (c, r) on one row, one column, odd and tile-sized shapes") {
    for (const auto& [shape_rows, shape_cols] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 13}, {17, 1}, {8, 8}, {9, 7}, {31, 65}, {64, 24}}) {
        const int64_t rows = shape_rows, cols = shape_cols;
        CAPTURE(rows);
        CAPTURE(cols);
        const Tensor m = random_tensor({rows, cols});
        const Tensor t = transposed(m);
        REQUIRE(t.shape == std::vector<int64_t>{cols, rows});
        bool same = true;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) same = same && t.data[c * rows + r] == m.data[r * cols + c];
        CHECK(same);
    }
}

}  // TEST_SUITE("unit")
