// Non-finite (NaN, Inf) weights and embeddings. By default every loader refuses them, naming the
// tensor and the index of the first bad value; with the process-wide switch on (--allow-nonfinite)
// they are loaded, and poisoned_heads() tells which heads they reach.
#pragma once

#include <string>
#include <vector>

#include "attention.hpp"
#include "tensor.hpp"

namespace attn_viz {

// The process-wide switch (off by default).
void set_allow_nonfinite(bool allow);
bool allow_nonfinite();

// Unless allow_nonfinite(): throws Error(bad_input, "<where>: <name>[i, j] is not finite
// (use --allow-nonfinite to load it anyway)") at the first NaN or Inf of `t`.
void require_finite(const Tensor& t, const std::string& name, const std::string& where);

// Names ("head 3") of the heads whose attention map or output share holds a NaN or Inf, in
// head order; empty when every head is finite.
std::vector<std::string> poisoned_heads(const LayerResult& result);

}  // namespace attn_viz
