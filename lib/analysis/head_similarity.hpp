// How alike the heads' attention maps and outputs are: Pearson correlation and cosine over the
// visible entries, the correlation of the maps' departures from uniform attention, Jensen-Shannon
// distance of the rows, cosine of the heads' contributions.
// Heads of all given layers are compared with each other (numbered layer-major); all layers of
// one model share the visibility. Formulas: docs/metrics.md.
#pragma once

#include <vector>

#include "head_matrix.hpp"
#include "layer_result.hpp"

namespace attn_viz {

struct MapSimilarities {
    HeadMatrix correlation;  // Pearson over visible entries; constant maps: 1 with each other, 0 with varying ones
    HeadMatrix cosine;       // cosine of the flattened maps (NaN if a map is all zero)
    HeadMatrix js_distance;  // mean over rows with visible keys of sqrt(JS divergence, base 2), in [0, 1]
    // Correlation of a_ij - 1/V_i, each map minus uniform attention over its row's V_i visible keys:
    // the causal triangle's rows of 1/(i + 1) alone correlate 0. Uniform maps: 1 with each other, 0
    // with others.
    HeadMatrix centred_correlation;
};

// layers[l]->attention: [H_l, T, S], all with equal T, S and visibility. Pairs of heads are spread
// over `threads` threads (parallel_for); every pair is summed in one fixed order (results do not depend on it).
MapSimilarities attention_map_similarities(const std::vector<const LayerResult*>& layers, int threads = 1);

// The same head in two runs (e.g. two checkpoints of one architecture on one input): head n of
// `first` against head n of `second` only. Both sides: same layer count, H and visibility. [N] each.
struct PairedSimilarities {
    std::vector<double> correlation, cosine, js_distance;
};
PairedSimilarities paired_map_similarities(const std::vector<const LayerResult*>& first,
                                           const std::vector<const LayerResult*>& second, int threads = 1);

// Cosine of two heads' contributions to the layer output, sum_t <c_ta, c_tb> / (||C_a|| ||C_b||),
// from each layer's contribution_gram [H, H]. Heads in different layers, heads with zero
// contribution and layers without a gram: NaN.
HeadMatrix output_cosine(const std::vector<const LayerResult*>& layers);

}  // namespace attn_viz
