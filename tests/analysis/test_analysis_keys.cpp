// keys_for_90's bisection (KeysForMass) against a full descending sort, on random rows with
// ties, zeros, a single key, causal-style zero tails and peaked or flat softmaxes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "keys_for_mass.hpp"
#include "support.hpp"

using namespace attn_viz;

namespace {

// The reference: sort descending, walk in double until fraction * mass is reached.
// row: [S]
int64_t sorted_count(std::vector<float> row, double mass, double fraction) {
    std::sort(row.begin(), row.end(), std::greater<float>());
    double reached = 0;
    int64_t taken = 0;
    for (float v : row) {
        if (reached >= fraction * mass) break;
        reached += v, ++taken;
    }
    return taken;
}

enum class RowKind { softmax, ties, zeros, causal_tail, one_hot, uniform };

// A row of `keys` weights >= 0 (not normalized: the count only depends on mass ratios).
// Tie levels are multiples of 1/64, so every partial sum is exact and ties meet the target
// exactly as often as the data says.
std::vector<float> random_row(RowKind kind, int64_t keys, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<float> row(static_cast<size_t>(keys));
    const double sharpness = 0.5 + 20.0 * unit(rng);
    for (float& v : row) {
        switch (kind) {
            case RowKind::softmax:
                v = static_cast<float>(std::exp(sharpness * (unit(rng) - 1.0)));
                break;
            case RowKind::ties:
                v = static_cast<float>(1 + static_cast<int>(4 * unit(rng))) / 64.0f;
                break;
            case RowKind::zeros:
                v = unit(rng) < 0.5 ? 0.0f : static_cast<float>(unit(rng));
                break;
            case RowKind::causal_tail:
                v = static_cast<float>(unit(rng));
                break;
            case RowKind::one_hot:
                v = 0.0f;
                break;
            case RowKind::uniform:
                v = 1.0f / 64.0f;
                break;
        }
    }
    if (kind == RowKind::causal_tail)  // keys past a random diagonal are zero
        std::fill(row.begin() + static_cast<int64_t>(unit(rng) * static_cast<double>(keys)) + 1, row.end(), 0.0f);
    if (kind == RowKind::one_hot || kind == RowKind::zeros)
        row[static_cast<size_t>(unit(rng) * static_cast<double>(keys))] = 1.0f;  // never all zero
    return row;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("keys_for_90 by bisection equals the count of a descending sort, ties included") {
    auto& rng = test_support::rng();
    KeysForMass counter;
    int checked_long_rows = 0;
    for (RowKind kind :
         {RowKind::softmax, RowKind::ties, RowKind::zeros, RowKind::causal_tail, RowKind::one_hot, RowKind::uniform})
        for (int64_t keys : {1, 2, 3, 7, 16, 17, 33, 100, 1000, 2049})
            for (int repeat = 0; repeat < 20; ++repeat) {
                const std::vector<float> row = random_row(kind, keys, rng);
                double mass = 0;
                float maximum = 0;
                for (float v : row) mass += v, maximum = std::max(maximum, v);
                for (double fraction : {0.9, 0.5, 1.0}) {
                    INFO("kind " << int(kind) << " keys " << keys << " fraction " << fraction);
                    CHECK(counter.count(row.data(), keys, mass, maximum, fraction) ==
                          sorted_count(row, mass, fraction));
                }
                checked_long_rows += keys > 32;
            }
    CHECK(checked_long_rows > 0);  // rows long enough for bisection steps, not only the final sort
}

TEST_CASE("keys_for_90 is 0 for a row without mass") {
    KeysForMass counter;
    const std::vector<float> zeros(5, 0.0f);
    CHECK(counter.count(zeros.data(), 5, 0.0, 0.0f, 0.9) == 0);
    CHECK(counter.count(zeros.data(), 0, 0.0, 0.0f, 0.9) == 0);
}

}  // TEST_SUITE("analysis")
