// top1_agreement against a direct count over random maps (causal and padded), and the ranked
// table's order.
#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "ranked_compare.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;

TEST_SUITE("analysis") {

TEST_CASE("top1_agreement counts the queries whose strongest visible key is the same in both runs") {
    for (RandomLayerShape shape : {RandomLayerShape{3, 7, 7, 4, true, 0.0}, RandomLayerShape{2, 5, 6, 4, false, 0.3},
                                   RandomLayerShape{1, 1, 1, 2, true, 0.0}}) {
        CAPTURE(shape.heads);
        CAPTURE(shape.queries);
        const LayerResult a = random_layer(shape);
        LayerResult b = a;  // b: a copy with some rows' weights permuted among visible keys
        const int64_t H = shape.heads, T = shape.queries, S = shape.keys;
        std::uniform_int_distribution<int> coin(0, 1);
        for (int64_t h = 0; h < H; ++h)
            for (int64_t i = 0; i < T; ++i)
                if (coin(test_support::rng())) {
                    std::vector<int64_t> visible;
                    for (int64_t j = 0; j < S; ++j)
                        if (a.visibility.visible(i, j)) visible.push_back(j);
                    float* row = b.attention.ptr() + (h * T + i) * S;
                    for (size_t k = 0; k + 1 < visible.size(); ++k) std::swap(row[visible[k]], row[visible[k + 1]]);
                }
        const std::vector<double> agreement = top1_agreement({&a, &a}, {&b, &a});
        REQUIRE(agreement.size() == static_cast<size_t>(2 * H));
        for (int64_t h = 0; h < H; ++h) {
            int64_t agree = 0, queries = 0;
            for (int64_t i = 0; i < T; ++i) {
                int64_t best_a = -1, best_b = -1;
                for (int64_t j = 0; j < S; ++j) {
                    if (!a.visibility.visible(i, j)) continue;
                    if (best_a < 0 ||
                        a.attention.data[(h * T + i) * S + j] > a.attention.data[(h * T + i) * S + best_a])
                        best_a = j;
                    if (best_b < 0 ||
                        b.attention.data[(h * T + i) * S + j] > b.attention.data[(h * T + i) * S + best_b])
                        best_b = j;
                }
                if (best_a < 0) continue;
                ++queries;
                agree += best_a == best_b;
            }
            if (queries == 0) {
                CHECK(std::isnan(agreement[static_cast<size_t>(h)]));
            } else {
                CHECK(agreement[static_cast<size_t>(h)] ==
                      doctest::Approx(static_cast<double>(agree) / static_cast<double>(queries)));
            }
            CHECK((std::isnan(agreement[static_cast<size_t>(H + h)]) ||
                   agreement[static_cast<size_t>(H + h)] == 1.0));  // a vs a
        }
    }
}

TEST_CASE("ranked_comparison_table lists the heads by descending JS distance, NaN last") {
    HeadComparison c;
    c.first.head_ids = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    c.first.labels = c.second.labels = {"mixed", "local", "mixed", "sink"};
    c.maps.js_distance = {0.2, std::nan(""), 0.5, 0.1};
    c.maps.correlation = {0.9, 0.8, 0.7, 0.95};
    const std::string table = ranked_comparison_table(c, {1.0, 0.5, 0.25, 0.75});
    const size_t first = table.find("0.500000"), second = table.find("0.200000"), third = table.find("0.100000"),
                 last = table.find("nan");
    REQUIRE(first != std::string::npos);
    CHECK(first < second);
    CHECK(second < third);
    CHECK(third < last);
    CHECK(table.find("0.250") != std::string::npos);
}

}  // TEST_SUITE("analysis")
