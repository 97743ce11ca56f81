// T5's relative position bias (transformers' T5Attention.compute_bias): each (query i, key j) pair
// falls in a bucket of its relative position j - i, and head h's score gains the stack's learned
// table[bucket, h].
#pragma once

#include <cstdint>

#include "tensor.hpp"

namespace attn_viz {

// The bucket of relative position `relative` (key - query) as T5Attention._relative_position_bucket
// computes it (the logarithm in float32, as transformers does, so the buckets are the same):
//   bidirectional (encoder): half the buckets for keys after the query, half for the rest, each
//     half B: |r| < B/2 exactly, else B/2 + log(|r| / (B/2)) / log(max_distance / (B/2)) * (B - B/2),
//     at most B - 1;
//   causal (decoder): max(-r, 0) in the same scheme over all `buckets`.
int64_t relative_position_bucket(int64_t relative, bool bidirectional, int64_t buckets, int64_t max_distance);

// table: [buckets, H] -> [H, T, S] with bias[h, i, j] = table[bucket(j - i), h].
Tensor relative_position_bias(const Tensor& table, int64_t T, int64_t S, bool bidirectional, int64_t max_distance);

}  // namespace attn_viz
