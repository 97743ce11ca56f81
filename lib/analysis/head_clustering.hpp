// Groups of redundant heads (average-linkage hierarchical clustering of a distance matrix, cut at
// a threshold) and the ranked list of the most similar pairs. docs/metrics.md.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "head_matrix.hpp"

namespace attn_viz {

// Merges the two closest clusters (average linkage, ties: lowest indices first) while their
// distance is <= cut; NaN distances never merge. Returns the clusters with >= 2 heads, members
// ascending, clusters ordered by their first member.
std::vector<std::vector<int64_t>> cluster_heads(const HeadMatrix& distance, double cut);

// The `count` pairs a < b with the smallest distance (NaN pairs last, never listed), ties broken by
// the lower (a, b).
std::vector<std::pair<int64_t, int64_t>> closest_pairs(const HeadMatrix& distance, int64_t count);

}  // namespace attn_viz
