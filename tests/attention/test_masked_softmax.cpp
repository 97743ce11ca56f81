#include <cmath>
#include <limits>

#include <doctest/doctest.h>

#include "error.hpp"
#include "fast_exp.hpp"
#include "masked_softmax.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

struct ReferenceRow {
    std::vector<double> weights;  // [S]
    double margin = 0;
};

// The definition, in double: softmax over visible keys, 0 elsewhere; top-1 minus top-2 visible score.
// row: [S]
ReferenceRow reference_row(const float* row, const Visibility& vis, int64_t i) {
    ReferenceRow out{std::vector<double>(static_cast<size_t>(vis.keys), 0.0)};
    std::vector<double> seen;
    double top = -INFINITY;
    for (int64_t j = 0; j < vis.keys; ++j)
        if (vis.visible(i, j)) seen.push_back(row[j]), top = std::max(top, static_cast<double>(row[j]));
    if (seen.empty()) return out;
    std::sort(seen.rbegin(), seen.rend());
    out.margin = seen.size() > 1 ? seen[0] - seen[1] : 0.0;
    double sum = 0;
    for (int64_t j = 0; j < vis.keys; ++j)
        if (vis.visible(i, j)) sum += std::exp(row[j] - top);
    for (int64_t j = 0; j < vis.keys; ++j)
        if (vis.visible(i, j)) out.weights[static_cast<size_t>(j)] = std::exp(row[j] - top) / sum;
    return out;
}

}  // namespace

TEST_SUITE("unit") {

TEST_CASE("fast_exp_nonpositive: within 3e-7 of exp on [-87, 0], exactly 0 below and at -inf") {
    double worst = 0;
    for (float x = 0.0f; x > -87.0f; x -= 0.000731f) {
        const double want = std::exp(static_cast<double>(x));
        worst = std::max(worst, std::fabs(fast_exp_nonpositive(x) - want) / want);
    }
    CHECK(worst < 3e-7);
    CHECK(fast_exp_nonpositive(0.0f) == 1.0f);
    CHECK(fast_exp_nonpositive(-88.0f) == 0.0f);
    CHECK(fast_exp_nonpositive(-std::numeric_limits<float>::infinity()) == 0.0f);
    CHECK(std::isnan(fast_exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("masked_softmax matches a double-precision softmax and margin under every mask") {
    struct Case {
        int64_t H, T, S;
        bool causal, padding;
        float spread;    // score scale: 1 gives flat rows, 30 nearly one-hot rows
        int64_t window;  // sliding window (causal cases), 0 = none
    };
    // Window 1 with every third key padding: queries 0, 3, 6, ... see no key at all.
    for (const Case c :
         {Case{1, 1, 1, false, false, 1, 0}, Case{3, 7, 7, true, false, 4, 0}, Case{2, 5, 19, false, true, 3, 0},
          Case{4, 33, 33, true, true, 30, 0}, Case{1, 17, 40, false, false, 1, 0}, Case{2, 64, 64, true, false, 8, 0},
          Case{3, 20, 20, true, false, 4, 5}, Case{2, 33, 33, true, true, 30, 4}, Case{1, 9, 9, true, true, 2, 1},
          Case{2, 12, 12, true, false, 3, 12}}) {
        CAPTURE(c.H);
        CAPTURE(c.T);
        CAPTURE(c.S);
        CAPTURE(c.causal);
        CAPTURE(c.padding);
        CAPTURE(c.window);
        Visibility vis{c.T, c.S, c.causal, {}, c.window};
        if (c.padding) {
            vis.key_excluded.assign(static_cast<size_t>(c.S), 0);
            for (int64_t j = 0; j < c.S; j += 3) vis.key_excluded[static_cast<size_t>(j)] = 1;  // incl. key 0
        }
        Tensor scores = random_tensor({c.H, c.T, c.S}, c.spread);
        const Tensor original = scores;
        // In two uneven calls, as attention.cpp does with row blocks.
        Tensor margin({c.H, c.T});
        const int64_t split = (c.H * c.T) / 3;
        masked_softmax(scores.ptr(), 0, split, c.S, vis, margin.ptr());
        masked_softmax(scores.ptr() + split * c.S, split, c.H * c.T - split, c.S, vis, margin.ptr() + split);
        double worst = 0, worst_margin = 0;
        for (int64_t h = 0; h < c.H; ++h)
            for (int64_t i = 0; i < c.T; ++i) {
                const ReferenceRow want = reference_row(original.ptr() + (h * c.T + i) * c.S, vis, i);
                worst_margin = std::max(worst_margin, std::fabs(margin.data[h * c.T + i] - want.margin));
                for (int64_t j = 0; j < c.S; ++j) {
                    const float got = scores.data[(h * c.T + i) * c.S + j];
                    if (!vis.visible(i, j)) CHECK(got == 0.0f);  // exactly: hidden keys are drawn as masked
                    if (c.window > 0 && j <= i - c.window) CHECK(got == 0.0f);  // outside the window, by its definition
                    worst = std::max(worst, std::fabs(got - want.weights[static_cast<size_t>(j)]));
                }
            }
        CHECK(worst < 1e-6);
        CHECK(worst_margin < 1e-5 * c.spread);
    }
}

TEST_CASE("masked_softmax: ties give a zero margin, a query that sees no key an all-zero row") {
    Visibility vis{2, 4, false, {1, 1, 0, 0}};
    Tensor scores({1, 2, 4});
    scores.data = {9.0f, 1.0f, 2.5f, 2.5f, 0.5f, 7.0f, -1.0f, 3.0f};
    Tensor margin({1, 2});
    masked_softmax(scores.ptr(), 0, 2, 4, vis, margin.ptr());
    CHECK(margin.data[0] == 0.0f);                   // 2.5 twice among the visible keys
    CHECK(margin.data[1] == doctest::Approx(4.0f));  // 3 - (-1); 7 and 0.5 are padding
    CHECK(scores.data[2] == doctest::Approx(0.5f));
    CHECK(scores.data[0] == 0.0f);

    Visibility none{1, 3, false, {1, 1, 1}};
    Tensor all_hidden = random_tensor({2, 1, 3});
    float margins[2] = {1, 1};
    masked_softmax(all_hidden.ptr(), 0, 2, 3, none, margins);
    CHECK(margins[0] == 0.0f);
    for (float w : all_hidden.data) CHECK(w == 0.0f);
}

TEST_CASE("masked_softmax on causal rows packed to fewer keys than the map has") {
    const int64_t T = 23, S = 23, first = 5, count = 9, row_keys = 16;  // queries 5..13 see keys up to 14
    Visibility vis{T, S, true, {}};
    CHECK(keys_seen(vis, first, count) == 14);
    CHECK(keys_seen(vis, T - 2, 4) == S);  // rows 21, 22 of one head, then 0, 1 of the next
    Tensor scores = random_tensor({count, row_keys}, 5.0f);
    const Tensor original = scores;
    std::vector<float> margin(count);
    masked_softmax(scores.ptr(), first, count, row_keys, vis, margin.data());
    for (int64_t n = 0; n < count; ++n) {
        std::vector<float> full(S, 0.0f);
        std::copy_n(original.ptr() + n * row_keys, row_keys, full.begin());
        const ReferenceRow want = reference_row(full.data(), vis, first + n);
        CHECK(std::fabs(margin[static_cast<size_t>(n)] - want.margin) < 5e-5);
        for (int64_t j = 0; j < row_keys; ++j)
            CHECK(std::fabs(scores.data[n * row_keys + j] - want.weights[static_cast<size_t>(j)]) < 1e-6);
    }
    CHECK_THROWS_AS(masked_softmax(scores.ptr(), first, count, 13, vis, margin.data()),
                    Error);  // query 13 sees 14 keys
}

TEST_CASE("masked_softmax: a non-finite score poisons its row instead of vanishing") {
    Visibility vis{1, 20, false, {}};
    Tensor scores = random_tensor({1, 1, 20});
    scores.data[13] = std::numeric_limits<float>::quiet_NaN();
    float margin = 0;
    masked_softmax(scores.ptr(), 0, 1, 20, vis, &margin);
    CHECK(std::isnan(scores.data[0]));
}

}  // TEST_SUITE("unit")
