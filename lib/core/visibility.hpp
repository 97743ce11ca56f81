// Which keys each query of an attention map may see: causal and padding masks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attn_viz {

// Key j < S is visible to query i unless it is padding, or the layer is causal and j > i.
struct Visibility {
    int64_t queries = 0;                // T
    int64_t keys = 0;                   // S
    bool causal = false;
    std::vector<uint8_t> key_excluded;  // [S], 1 = padding key; empty = none excluded

    bool visible(int64_t i, int64_t j) const {
        return (!causal || j <= i) && (key_excluded.empty() || !key_excluded[static_cast<size_t>(j)]);
    }
    // Keys at or past this are hidden from query i by the causal mask: visible keys are those
    // in [0, visible_end(i)) that are not padding. Lets row loops run over a contiguous range.
    int64_t visible_end(int64_t i) const { return causal ? std::min(i + 1, keys) : keys; }
    // Number of keys query i sees (0 possible with padding: such a row is all zero).
    int64_t visible_count(int64_t i) const {
        const int64_t end = visible_end(i);
        if (key_excluded.empty()) return end;
        int64_t n = 0;
        for (int64_t j = 0; j < end; ++j) n += !key_excluded[static_cast<size_t>(j)];
        return n;
    }
};

}  // namespace attn_viz
