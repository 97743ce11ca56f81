// Which heads NaN/Inf values reach (loaded with the non-finite switch on, see finite.hpp).
#pragma once

#include <string>
#include <vector>

#include "layer_result.hpp"

namespace attn_viz {

// Names ("head 3") of the heads whose attention map or output share holds a NaN or Inf, in
// head order; empty when every head is finite.
std::vector<std::string> poisoned_heads(const LayerResult& result);

}  // namespace attn_viz
