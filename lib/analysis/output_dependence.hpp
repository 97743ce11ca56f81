// How much two heads' outputs over the tokens of one sequence depend on each other: Gaussian
// mutual information from (ridge-regularised) canonical correlations, and linear CKA
// (Kornblith et al. 2019). Pairs of heads in one layer only; pairs across layers are NaN.
// Formulas and the ridge: docs/metrics.md.
#pragma once

#include <cstdint>
#include <vector>

#include "head_matrix.hpp"
#include "layer_result.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

// The ridge added to each head's covariance, as a fraction of its mean variance:
// Sigma_aa + output_mi_ridge * tr(Sigma_aa) / d_h * I.
inline constexpr double output_mi_ridge = 1e-2;

// Whether output_dependence works from each head's [T, T] token Gram (one T x T Cholesky
// factorisation per pair, T^3/6 multiply-adds) rather than from [d_h, d_h] covariance blocks
// (about 1.17 d_h^3 per pair and a [T, H d_h] -> [H d_h, H d_h] product): for fewer tokens than
// 1.875 head widths, where it is the faster (32 heads of 128 on one thread, 2026-11-27, token
// against feature space: 0.07 against 0.34 s at T = 128, 0.22 against 0.37 at T = 224, 0.42
// against 0.36 at T = 256). Both give the same numbers up to rounding (docs/metrics.md).
inline bool output_dependence_in_token_space(int64_t tokens, int64_t head_width) {
    return 8 * tokens < 15 * head_width;
}

struct OutputDependence {
    HeadMatrix gaussian_mi;  // nats, -1/2 sum_k ln(1 - rho_k^2) of the regularised canonical correlations
    HeadMatrix linear_cka;   // ||Sigma_ab||_F^2 / (||Sigma_aa||_F ||Sigma_bb||_F), in [0, 1]
};

// layers[l]->context: [T, H*d_h] (the head outputs A_h V_h), H heads per layer, equal T. Heads are
// numbered layer-major. A head whose output is constant over the tokens (every head when T = 1)
// and layers without a context give NaN entries. `threads` share the per-pair work.
OutputDependence output_dependence(const std::vector<const LayerResult*>& layers, OnednnBackend& backend, int threads);

}  // namespace attn_viz
