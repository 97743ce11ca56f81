// Which heads NaN/Inf values reach (loaded with the non-finite switch on, see finite.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layer_result.hpp"

namespace attn_viz {

// Names ("L1H3", layer: the layer's number) of the heads whose attention map or output share holds
// a NaN or Inf, in head order; empty when every head is finite.
std::vector<std::string> poisoned_heads(const LayerResult& result, int64_t layer);

}  // namespace attn_viz
