// The alignment statistics of cross-attention heads (cross_alignment.hpp) on maps whose values are
// known by hand: a one-to-one diagonal, a uniform map, a reversed alignment, every row on one
// source token, and a target twice as long as the source.
#include <cmath>

#include <doctest/doctest.h>

#include "cross_alignment.hpp"

using namespace attn_viz;

namespace {

// [1, T, S] with row i's weight 1 on key `key(i)`.
template <typename Key>
Tensor one_hot_map(int64_t T, int64_t S, Key key) {
    Tensor map({1, T, S});
    for (int64_t i = 0; i < T; ++i) map.data[static_cast<size_t>(i * S + key(i))] = 1.0f;
    return map;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("cross alignment: diagonal, uniform, reversed, collapsed and stretched maps") {
    const CrossAlignment diagonal = cross_alignment(one_hot_map(5, 5, [](int64_t i) { return i; })).front();
    CHECK(diagonal.entropy == doctest::Approx(0.0));
    CHECK(diagonal.confidence == doctest::Approx(1.0));
    CHECK(diagonal.diagonal == doctest::Approx(1.0));
    CHECK(diagonal.monotonicity == doctest::Approx(1.0));
    CHECK(diagonal.coverage == doctest::Approx(1.0));

    Tensor uniform({2, 4, 8});
    for (float& v : uniform.data) v = 1.0f / 8.0f;
    const std::vector<CrossAlignment> flat = cross_alignment(uniform);
    REQUIRE(flat.size() == 2);
    CHECK(flat[1].entropy == doctest::Approx(std::log(8.0)));
    CHECK(flat[1].confidence == doctest::Approx(0.125));
    CHECK(flat[1].coverage == doctest::Approx(1.0));
    CHECK(
        flat[1].diagonal ==
        doctest::Approx(14.0 / 32.0));  // the band |j - c_i| <= 2 around c_i = 0.5, 2.5, 4.5, 6.5 holds 3, 4, 4, 3 keys
    CHECK(std::isnan(flat[1].monotonicity));  // every argmax is key 0: a constant

    const CrossAlignment reversed = cross_alignment(one_hot_map(6, 6, [](int64_t i) { return 5 - i; })).front();
    CHECK(reversed.monotonicity == doctest::Approx(-1.0));
    CHECK(reversed.diagonal < 0.5);

    const CrossAlignment collapsed = cross_alignment(one_hot_map(4, 8, [](int64_t) { return 3; })).front();
    CHECK(collapsed.coverage == doctest::Approx(1.0 / 8.0));
    CHECK(std::isnan(collapsed.monotonicity));

    // T = 2 S: two target tokens per source token, on the diagonal scaled to the lengths.
    const CrossAlignment stretched = cross_alignment(one_hot_map(8, 4, [](int64_t i) { return i / 2; })).front();
    CHECK(stretched.diagonal == doctest::Approx(1.0));
    CHECK(stretched.monotonicity > 0.9);
    CHECK(stretched.coverage == doctest::Approx(1.0));
    CHECK(std::isnan(cross_alignment(one_hot_map(1, 3, [](int64_t) { return 1; })).front().monotonicity));
}

}  // TEST_SUITE("analysis")
