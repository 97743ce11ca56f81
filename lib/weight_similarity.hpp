// Weight-only similarity of heads: cosine (Frobenius) between heads' QK circuits W_Q^h W_K^h^T and
// OV circuits W_V^h W_O^h, computed through their D x d_h factors so no D x D matrix is formed.
// Needs no input sequence. Formulas: docs/metrics.md.
#pragma once

#include <vector>

#include "head_matrix.hpp"
#include "layer_weights.hpp"

namespace attn_viz {

struct WeightSimilarities {
    HeadMatrix qk_cosine;  // <QK_a, QK_b>_F / (||QK_a||_F ||QK_b||_F)
    HeadMatrix ov_cosine;  // same for OV
};

// layers[l]: one layer's weights (w_q [D, H d_h], w_k/w_v [D, KV d_h], w_o [H d_h, D]), none null,
// all with the same D and d_h.
// Heads are numbered layer-major. Pairs in different layers are computed only when
// `across_layers` is set (cost 4 D d_h^2 per pair), otherwise NaN. Pairs run on `threads` threads.
WeightSimilarities weight_similarities(const std::vector<const LayerWeights*>& layers, bool across_layers,
                                       int threads = 1);

}  // namespace attn_viz
