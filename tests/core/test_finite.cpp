// all_finite and first_nonfinite (finite.hpp): every kind of non-finite value at the first and
// last place of a scan block and of the array, among finite values of every kind.
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "finite.hpp"
#include "support.hpp"

using namespace attn_viz;

TEST_SUITE("core") {

TEST_CASE("all_finite finds NaN and Inf anywhere, and passes every finite value") {
    using limits = std::numeric_limits<float>;
    const float bad_values[] = {limits::quiet_NaN(), -limits::quiet_NaN(), limits::infinity(), -limits::infinity(),
                                std::bit_cast<float>(0x7f800001u)};  // a signalling NaN
    // The extremes of the finite values: largest, smallest normal, subnormal, both zeros.
    const float edge_values[] = {limits::max(), -limits::max(), limits::min(), limits::denorm_min(), -0.0f, 0.0f};
    std::uniform_int_distribution<size_t> pick_edge(0, std::size(edge_values) - 1);
    // Empty, inside the first 1024-value block, at and past its end, several blocks.
    for (const int64_t count : {0, 1, 7, 1023, 1024, 1025, 5000}) {
        CAPTURE(count);
        Tensor t = test_support::random_tensor({count});
        for (int64_t i = 0; i < count; i += 97) t.data[i] = edge_values[pick_edge(test_support::rng())];
        CHECK(all_finite(t.ptr(), count));
        CHECK(first_nonfinite(t, "w").empty());
        for (const int64_t at : {int64_t{0}, int64_t{1023}, int64_t{1024}, count - 1}) {
            if (at < 0 || at >= count) continue;
            for (const float bad : bad_values) {
                CAPTURE(at);
                const float kept = t.data[at];
                t.data[at] = bad;
                CHECK_FALSE(all_finite(t.ptr(), count));
                CHECK(first_nonfinite(t, "w") == "w[" + std::to_string(at) + "]");
                t.data[at] = kept;
            }
        }
    }
}

}  // TEST_SUITE("core")
