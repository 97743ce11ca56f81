// Alignment statistics of cross-attention heads (an encoder-decoder's decoder reading the
// encoder): how sharp, how diagonal, how monotonic and how complete each head's alignment of the
// T target tokens (rows) to the S source tokens (columns) is. Formulas: docs/metrics.md.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor.hpp"

namespace attn_viz {

struct CrossAlignment {
    double entropy = 0;     // mean over rows of -sum_j a_ij ln a_ij (nats)
    double confidence = 0;  // mean over rows of max_j a_ij
    double diagonal =
        0;  // mean over rows of the mass within the band |j - c_i| <= max(1, S/T), c_i = (i + 1/2) S/T - 1/2
    double monotonicity =
        0;  // Spearman correlation of i and argmax_j a_ij over the rows; NaN when T < 2 or either is constant
    double coverage = 0;  // share of source tokens j receiving sum_i a_ij >= T / (2 S), half their uniform share
};

// The statistics of CrossAlignment with their stats.json names, in that order (corpus moments,
// partial files and stats.json iterate them).
struct CrossAlignmentField {
    const char* name;
    double CrossAlignment::*member;
};
inline constexpr int cross_alignment_count = 5;
const std::array<CrossAlignmentField, cross_alignment_count>& cross_alignment_fields();

// map: [H, T, S] one layer's cross-attention weights (rows sum to 1) -> one CrossAlignment per head.
std::vector<CrossAlignment> cross_alignment(const Tensor& map);

// {"entropy", "confidence", "diagonal", "monotonicity", "coverage"}, NaN as null.
nlohmann::json cross_alignment_json(const CrossAlignment& a);

}  // namespace attn_viz
