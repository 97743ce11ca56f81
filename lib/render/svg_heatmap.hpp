// The per-head picture as SVG (--svg): the same layout as the PNG, as vector rects and text.
#pragma once

#include <string>
#include <vector>

#include "heatmap_layout.hpp"

namespace attn_viz {

// weights: [T, S] one head. One <rect> per visible (unmasked) cell, masked cells show a hatch
// pattern laid under the grid, text labels in DejaVu Sans, a gradient colorbar with ticks.
std::string head_svg(const float* weights, const Visibility& visibility, const std::vector<std::string>& query_tokens,
                     const std::vector<std::string>& key_tokens, const HeatmapStyle& style);

// Writes head_svg() to path; throws Error(io, "<path>: ...") when it cannot.
void write_head_svg(const std::string& path, const float* weights, const Visibility& visibility,
                    const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                    const HeatmapStyle& style);

}  // namespace attn_viz
