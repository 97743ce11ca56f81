// Non-finite (NaN, Inf) values in weights and embeddings. By default every loader refuses them,
// naming the tensor and the index of the first bad value; with LoadLimits::allow_nonfinite they
// are loaded, and poisoned_heads() tells which heads they reach.
#pragma once

#include <cstdint>
#include <string>

#include "load_limits.hpp"
#include "tensor.hpp"

namespace attn_viz {

// Unless limits.allow_nonfinite: throws Error(bad_input, "<where>: <name>[i, j] is not finite",
// Remedy::allow_nonfinite) at the first NaN or Inf of `t`.
void require_finite(const Tensor& t, const std::string& name, const std::string& where, const LoadLimits& limits);

// The first non-finite entry of `t` as "<name>[i, j]", or "" if every value is finite.
std::string first_nonfinite(const Tensor& t, const std::string& name);

// values: [count]. True when no value is NaN or Inf.
bool all_finite(const float* values, int64_t count);

}  // namespace attn_viz
