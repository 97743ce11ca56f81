// compare --diff-pictures N: the N heads whose maps changed most (largest JS distance between
// their map in A and in B) drawn as A | B | A - B (figure_map_comparison), as
// DIR/diff_head_NN.png (diff_layer_LL_head_NN.png when there are several layers).
#pragma once

#include <string>
#include <vector>

#include "head_compare.hpp"
#include "layer_result.hpp"
#include "output_dir.hpp"

namespace attn_viz_cli {

// Indices (in comparison order) of the `count` heads with the largest map JS distance, largest
// first; heads whose distance is undefined come last.
std::vector<int64_t> most_changed_heads(const attn_viz::HeadComparison& comparison, int64_t count);

// Stages one picture per head of most_changed_heads(comparison, count) in `out`. first, second:
// each run's layers (as compared); tokens: [T] labels of the queries and keys.
void write_diff_pictures(attn_viz::OutputDir& out, const attn_viz::HeadComparison& comparison,
                         const std::vector<const attn_viz::LayerResult*>& first,
                         const std::vector<const attn_viz::LayerResult*>& second,
                         const std::vector<std::string>& tokens, int64_t count);

}  // namespace attn_viz_cli
