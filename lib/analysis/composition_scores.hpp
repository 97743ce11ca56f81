// Composition scores between heads (Elhage et al. 2021, "A Mathematical Framework for Transformer
// Circuits"), from the weights alone, as TransformerLens' all_composition_scores computes them:
// for an earlier head a (OV_a = W_V^a W_O^a) and a head b of a later layer,
//   score = ||OV_a R_b||_F / (||OV_a||_F ||R_b||_F),
// R_b = QK_b = W_Q^b W_K^b^T (Q-composition: a writes what b's queries read),
//       QK_b^T = W_K^b W_Q^b^T (K-composition: what b's keys read) or OV_b (V-composition).
// The layer norms as TransformerLens folds them (fold_ln, center_writing_weights): the weight of
// the norm before each block's attention scales the rows of its W_Q, W_K, W_V; for LayerNorm
// those reading matrices are also centred (their mean over D removed) and W_O's rows too (what a
// head writes is centred by the next norm). A norm's per-token scale is not a weight: it is left
// out. GQA: a query head uses its key/value head's W_K and W_V.
// Every D x D product is computed through its d_h-wide factors: ||A M S||_F^2 =
// <(A^T A) M, M (S S^T)>_F with M = W_O^a W_Q^b (or W_K^b, W_V^b) d_h x d_h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer_weights.hpp"
#include "model_weights.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

enum class CompositionKind { q, k, v };
const char* composition_kind_name(CompositionKind kind);  // "q", "k", "v"

struct CompositionScores {
    int64_t layers = 0, heads = 0;
    double chance = 0;  // composition_chance of the layers' D and the folding: what unrelated heads score
    // Per kind (indexed by CompositionKind), [N, N] with N = L H heads layer-major: row a the
    // earlier head, column b the later one; NaN unless b's layer is after a's.
    Tensor scores[3];
    const Tensor& of(CompositionKind kind) const { return scores[static_cast<int>(kind)]; }
};

// The chance level of a composition score, the same for Q, K and V: sqrt(E[score^2]) over
// independent random weights whose distribution does not change under rotations of the residual
// stream (Gaussian W_Q, W_K, W_V, W_O of any d_h): 1 / sqrt(D), or 1 / sqrt(D - 1) when `centred`
// (LayerNorm: readers and writers then live in the D - 1 directions orthogonal to all ones). The
// mean score of such weights is a little below it (0.97 of it at d_h = 4, 0.99 at 8). docs/metrics.md.
double composition_chance(int64_t d_model, bool centred);

// How the norms before each block's attention are folded in (above).
struct NormFolding {
    std::vector<Tensor> weights;  // per layer [D], or empty: no norm weights to fold
    bool center = false;          // LayerNorm: centre the reading matrices and W_O's rows
};

// The folding of `model`'s attention norms: pre-norm and parallel blocks fold their norm before
// attention (centred for LayerNorm). A post-norm model (BERT) is refused by composition_obstacle
// (Error(internal) here). A streamed model's blocks are loaded for their norms.
NormFolding attention_norm_folding(const ModelWeights& model);

// Why composition scores (bilinear in the weights) do not describe `model`'s heads, or "" when
// they do: per-head q/k norms (Qwen3, Gemma 3) make W_QK nonlinear, a norm on each attention
// output (Gemma's sandwich blocks) rescales W_OV per token, and so do the norms after each block of
// a post-norm model (BERT), with the residual stream. `layers`: the model's attention weights.
std::string composition_obstacle(const ModelWeights& model, const std::vector<const LayerWeights*>& layers);

// How `folding` treats the norms, in words (stats.json's norm_folding).
std::string norm_folding_description(const NormFolding& folding);

// layers[l]: one layer's weights (all with the same D, H and d_h). Every earlier head against
// every head of every later layer, three kinds.
CompositionScores composition_scores(const std::vector<const LayerWeights*>& layers, const NormFolding& folding,
                                     OnednnBackend& backend);

}  // namespace attn_viz
