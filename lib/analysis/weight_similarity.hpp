// Weight-only similarity of heads: cosine (Frobenius) between heads' QK circuits W_Q^h W_K^h^T and
// OV circuits W_V^h W_O^h, computed through their D x d_h factors so no D x D matrix is formed.
// Needs no input sequence. Formulas: docs/metrics.md.
#pragma once

#include <vector>

#include "head_matrix.hpp"
#include "layer_result.hpp"
#include "layer_weights.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

struct WeightSimilarities {
    HeadMatrix qk_cosine;  // <QK_a, QK_b>_F / (||QK_a||_F ||QK_b||_F)
    HeadMatrix ov_cosine;  // same for OV
};

// layers[l]: one layer's weights (w_q [D, H d_h], w_k/w_v [D, KV d_h], w_o [H d_h, D]), none null,
// all with the same D and d_h.
// Heads are numbered layer-major. Pairs in different layers are computed only when
// `across_layers` is set, otherwise NaN. The d_h x d_h blocks A_a^T A_b of every pair come from
// four Gram matrices per layer (W_Q^T W_Q, W_K^T W_K, W_V^T W_V, W_O W_O^T; over all layers'
// columns at once with `across_layers`), computed on oneDNN: cost 2 D (H d_h)^2 each. The result
// depends on the weights only: compute it once per run. output_grams (without across_layers):
// per layer, W_O W_O^T where a run has computed it already (LayerResult::output_gram), or null;
// empty: none known. A known Gram is used instead of computing it again (the same product, so
// the same bits).
WeightSimilarities weight_similarities(const std::vector<const LayerWeights*>& layers, bool across_layers,
                                       OnednnBackend& backend, const std::vector<const Tensor*>& output_grams = {});

// w: one layer's weights, as weight_similarities takes them, the layer whose heads are numbered
// from first_head in `into` ([N, N] each, N >= first_head + w.num_heads) -> its within-layer
// pairs written there, the same numbers as weight_similarities over all layers without
// across_layers gives them (a pass holding one layer's weights at a time fills the matrices
// layer by layer).
void add_layer_weight_similarities(WeightSimilarities& into, int64_t first_head, const LayerWeights& w,
                                   OnednnBackend& backend);

// The W_O Grams the runs `layers` computed (LayerResult::output_gram), one per layer, or none
// (empty) unless every layer has one: weight_similarities' output_grams.
std::vector<const Tensor*> output_grams_of(const std::vector<const LayerResult*>& layers);

}  // namespace attn_viz
