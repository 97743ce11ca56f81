// Non-finite (NaN, Inf) values in weights and embeddings. By default every loader refuses them,
// naming the tensor and the index of the first bad value; with the process-wide switch on
// (the command line's --allow-nonfinite) they are loaded, and poisoned_heads() tells which heads
// they reach.
#pragma once

#include <cstdint>
#include <string>

#include "tensor.hpp"

namespace attn_viz {

// The process-wide switch (off by default).
void set_allow_nonfinite(bool allow);
bool allow_nonfinite();

// Unless allow_nonfinite(): throws Error(bad_input, "<where>: <name>[i, j] is not finite ...") at
// the first NaN or Inf of `t`.
void require_finite(const Tensor& t, const std::string& name, const std::string& where);

// The first non-finite entry of `t` as "<name>[i, j]", or "" if every value is finite.
std::string first_nonfinite(const Tensor& t, const std::string& name);

// values: [count]. True when no value is NaN or Inf.
bool all_finite(const float* values, int64_t count);

}  // namespace attn_viz
