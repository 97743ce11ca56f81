// What compare adds for two whole models (quantized vs full precision): per head the fraction of
// queries whose strongest key agrees, and the heads ranked by how far their maps moved.
#pragma once

#include <string>
#include <vector>

#include "head_compare.hpp"
#include "layer_result.hpp"

namespace attn_viz {

// first/second: the same layers of two checkpoints on one input (attention [H, T, S] each, same
// shapes). Per head, layer-major: the fraction of queries with a visible key whose largest-weight
// key (the first on ties) is the same in both; NaN when no query sees a key.
std::vector<double> top1_agreement(const std::vector<const LayerResult*>& first,
                                   const std::vector<const LayerResult*>& second);

// One line per head, largest JS distance first (NaN last): layer, head, JS distance, correlation,
// top-1 agreement, both labels.
std::string ranked_comparison_table(const HeadComparison& comparison, const std::vector<double>& top1);

}  // namespace attn_viz
