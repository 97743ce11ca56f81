// The fewest keys of an attention row that hold a given share of its mass (keys_for_90), found
// by bisection over the weight with vectorized passes over the row instead of a sort.
#pragma once

#include <cstdint>
#include <vector>

namespace attn_viz {

// Reuses its buffer across rows: one per thread.
class KeysForMass {
public:
    // row: [S] weights >= 0 with sum `mass` and largest `maximum`. The fewest keys whose weights,
    // largest first, reach fraction * mass: exactly the count a descending sort gives, ties
    // included. 0 when fraction * mass is not > 0.
    int64_t count(const float* row, int64_t keys, double mass, float maximum, double fraction);

private:
    std::vector<float> candidates_;  // weights in the last bisection interval
};

}  // namespace attn_viz
