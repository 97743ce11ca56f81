// The masking and softmax step of attention as one pass over each row of scores.
#pragma once

#include "tensor.hpp"
#include "visibility.hpp"

namespace attn_viz {

// Keys [0, keys_seen) hold every key that rows [first, first + count) of an [H*T, S] map (row n
// is query n % T) may see: the largest visible_end() among them (0 when none sees a key).
int64_t keys_seen(const Visibility& vis, int64_t first, int64_t count);

// scores: rows [first, first + count) of an [H, T, S] map of scaled scores Q K^T / sqrt(d_h),
// flattened to [H*T, S] (row n is query n % T), each row holding its first `row_keys` keys
// (row_keys >= keys_seen(vis, first, count); S for whole rows), replaced in place by attention
// weights: softmax over the keys the query sees (vis), 0 on hidden keys (causal future, outside a sliding window,
// padding), and an all-zero row where a query sees no key. margin: [count], each row's logit margin: the largest minus
// the second-largest visible score (0 with fewer than two visible keys or a tie). Rows are spread over OpenMP threads
// (no oneDNN call runs meanwhile).
void masked_softmax(float* scores, int64_t first, int64_t count, int64_t row_keys, const Visibility& vis,
                    float* margin);

}  // namespace attn_viz
