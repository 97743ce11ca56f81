// Per-head statistics of attention maps, and similarities between heads.
// Formulas: docs/metrics.md.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "attention.hpp"
#include "tensor.hpp"

namespace attn_viz {

struct HeadStats {
    double entropy = 0;             // mean over queries of -sum_j a_ij ln a_ij (nats)
    double normalized_entropy = 0;  // mean over queries of that / ln(visible keys); 0 where one key
};

// One entry per head. Rows with no visible key are left out of every mean.
std::vector<HeadStats> compute_head_stats(const LayerResult& result);

// Pearson correlation between the heads' flattened maps over the visible entries. [H, H]
// A head with constant weights over those entries correlates 0 with others and 1 with itself.
Tensor attention_correlation(const LayerResult& result);

}  // namespace attn_viz
