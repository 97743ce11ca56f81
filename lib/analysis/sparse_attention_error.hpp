// How well each head survives sparse attention: for top-k and for "sink + recent window"
// patterns of growing size, the attention mass the pattern drops and the relative error of the
// head's output when the kept weights are renormalised; the smallest size that keeps the error
// under a tolerance; and a check of the logit-margin bound on the top-1 error.
// Formulas: docs/metrics.md ("Sparse-attention error").
#pragma once

#include <cstdint>
#include <vector>

#include "layer_result.hpp"

namespace attn_viz {

// The pattern sizes tried for S keys: 1, 2, 4, ... below S, then S.
std::vector<int64_t> sparse_sizes(int64_t keys);

struct SparseHeadError {
    // [sizes]: mean over rows with a visible key of the dropped mass, and the relative output error
    // ||O - O~||_F / ||O||_F over those rows (NaN when ||O||_F = 0).
    std::vector<double> top_k_mass_dropped, top_k_error;    // keep the k largest weights of each row
    std::vector<double> window_mass_dropped, window_error;  // keep key 0 and the keys j with |i - j| < w
    double keys_needed = 0;       // smallest k whose top_k_error <= tolerance (NaN when undefined)
    double window_needed = 0;     // smallest w whose window_error <= tolerance (NaN when undefined)
    double top1_mass_bound = 0;   // mean over rows of (V_i - 1) e^-m_i / (1 + (V_i - 1) e^-m_i), m_i the logit margin
    double top1_error_bound = 0;  // the matching output bound, relative to ||O||_F
    double top1_bound_holds = 0;  // fraction of rows whose top-1 mass and error are within the bounds
};

// result.attention: [H, T, S]; result.values: [KV, S, d_h]; result.logit_margin: [H, T].
// Without values every number is NaN (and the size vectors are empty). Heads are spread over
// `threads` threads.
std::vector<SparseHeadError> sparse_attention_errors(const LayerResult& result, double tolerance, int threads = 1);

}  // namespace attn_viz
