// Row kernels of the attention-map similarities: one head's row summed once per block (x ln x,
// squares, mass) and two heads' rows compared (dot product, Jensen-Shannon divergence).
// Formulas: docs/metrics.md. All loops run in sixteen float lanes so they vectorize.
#pragma once

#include <cstdint>

namespace attn_viz {

// One head's row on its own: sum p^2 and sum p; p_ln_p[j] = p_j ln p_j (0 where p_j = 0).
struct RowSelf {
    double square = 0;
    double mass = 0;
};
// p: [S]; p_ln_p: [S] written
RowSelf sum_self_row(const float* p, int64_t keys, float* p_ln_p);

// Two heads' rows for one query.
struct RowPair {
    double dot = 0;         // sum_j p_j q_j
    double divergence = 0;  // JS divergence, base 2
};

// One logarithm per entry: JSD = sum_j (p ln p + q ln q - 2 m ln m) / (2 ln 2), m = (p + q) / 2,
// from the rows' precomputed x ln x; entries with p_j == q_j add exactly 0. Cancellation leaves an
// absolute error of about 1e-7 in the divergence, which the square root of a JS distance
// amplifies near 0: callers recompute small divergences with compare_rows_by_ratio.
// p, q, p_ln_p, q_ln_q: [S]
RowPair compare_rows(const float* p, const float* q, const float* p_ln_p, const float* q_ln_q, int64_t keys);

// The same sums with the JS divergence (base 2) in the ratio form (p+q)/2 [ln 2 + r ln r + (1-r)
// ln(1-r)] / ln 2 with r = p / (p + q), the bracket taken from a series in u = 2r - 1 where the
// logarithms would cancel (|u| <= 1/2): each entry is accurate relative to itself (about 1e-6), so
// small divergences stay accurate. A division and a ten-term polynomial per entry, and two
// logarithms for each sixteen entries of which one has |u| > 1/2 (none in near-uniform rows).
// p, q: [S]
RowPair compare_rows_by_ratio(const float* p, const float* q, int64_t keys);

}  // namespace attn_viz
