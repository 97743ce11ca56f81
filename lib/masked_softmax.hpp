// The masking and softmax step of attention as one pass over each row of scores.
#pragma once

#include "tensor.hpp"
#include "visibility.hpp"

namespace attn_viz {

// scores: [H, T, S] scaled scores Q K^T / sqrt(d_h), replaced in place by attention weights:
// softmax over the keys query i sees (vis), 0 on hidden keys (causal future, padding), and an
// all-zero row where a query sees no key. Returns the logit margin [H, T]: the largest minus the
// second-largest visible score (0 with fewer than two visible keys or a tied maximum).
// Rows are spread over OpenMP threads (no oneDNN call runs meanwhile).
Tensor masked_softmax(Tensor& scores, const Visibility& vis);

}  // namespace attn_viz
