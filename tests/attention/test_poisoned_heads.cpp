#include <algorithm>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include <doctest/doctest.h>

#include "poisoned_heads.hpp"
#include "support.hpp"

using namespace attn_viz;

TEST_SUITE("attention") {

TEST_CASE("poisoned_heads finds NaN and +-Inf anywhere in a head's map or output share, and only there") {
    auto& rng = test_support::rng();
    const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
    for (auto [H, T, S] : {std::tuple<int64_t, int64_t, int64_t>{4, 40, 53}, {1, 1, 1}, {3, 7, 5}})
        for (float bad : bad_values) {
            LayerResult r;
            r.attention = test_support::random_tensor({H, T, S});
            r.attention.data[0] = std::numeric_limits<float>::max();  // large but finite
            r.contribution_norms = test_support::random_tensor({H, T});
            const int64_t map_head = std::uniform_int_distribution<int64_t>(0, H - 1)(rng);
            // Anywhere in the head's map, including its last entry (past the first scan block).
            const int64_t at = std::uniform_int_distribution<int64_t>(0, T * S - 1)(rng);
            r.attention.data[static_cast<size_t>(map_head * T * S + (at % 2 ? at : T * S - 1))] = bad;
            const int64_t layer = std::uniform_int_distribution<int64_t>(0, 40)(rng);
            const std::string tag = "L" + std::to_string(layer) + "H";
            std::vector<std::string> want = {tag + std::to_string(map_head)};
            CHECK(poisoned_heads(r, layer) == want);
            const int64_t share_head = H - 1 - map_head;
            r.contribution_norms.data[static_cast<size_t>(share_head * T + T - 1)] = bad;
            if (share_head != map_head) want.push_back(tag + std::to_string(share_head));
            std::sort(want.begin(), want.end());
            CHECK(poisoned_heads(r, layer) == want);
        }
}

}  // TEST_SUITE("attention")
