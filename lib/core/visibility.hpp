// Which keys each query of an attention map may see: causal, sliding-window and padding masks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace attn_viz {

// Key j < S is visible to query i unless it is padding, the layer is causal and j > i, or the
// layer has a sliding window of W keys and j <= i - W (transformers' sliding_window_overlay:
// query i sees keys i - W + 1 .. i).
struct Visibility {
    int64_t queries = 0;  // T
    int64_t keys = 0;     // S
    bool causal = false;
    std::vector<uint8_t> key_excluded;  // [S], 1 = padding key; empty = none excluded
    int64_t window = 0;                 // sliding window W (causal layers only); 0 = none
    // Queries and keys are positions of one sequence (self-attention); false for cross attention
    // (target queries, source keys), where "the previous token" or a distance means nothing.
    bool shared_positions = true;

    bool visible(int64_t i, int64_t j) const {
        return j >= visible_begin(i) && (!causal || j <= i) &&
               (key_excluded.empty() || !key_excluded[static_cast<size_t>(j)]);
    }
    // Keys before this are hidden from query i by the sliding window (0 without one).
    int64_t visible_begin(int64_t i) const { return window > 0 ? std::clamp<int64_t>(i - window + 1, 0, keys) : 0; }
    // Keys at or past this are hidden from query i by the causal mask: visible keys are those
    // in [visible_begin(i), visible_end(i)) that are not padding. Lets row loops run over a
    // contiguous range.
    int64_t visible_end(int64_t i) const { return causal ? std::min(i + 1, keys) : keys; }
    // Number of keys query i sees (0 possible with padding: such a row is all zero).
    int64_t visible_count(int64_t i) const {
        const int64_t begin = visible_begin(i), end = visible_end(i);
        if (key_excluded.empty()) return std::max<int64_t>(0, end - begin);
        int64_t n = 0;
        for (int64_t j = begin; j < end; ++j) n += !key_excluded[static_cast<size_t>(j)];
        return n;
    }
};

}  // namespace attn_viz
