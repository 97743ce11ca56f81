// The per-head picture: one attention map as a labelled heatmap PNG with a colorbar.
#pragma once

#include <string>
#include <vector>

#include "heatmap_layout.hpp"
#include "raster_image.hpp"

namespace attn_viz {

// Draws the cells, labels, title and colorbar that layout_heatmap() placed.
RasterImage render_heatmap(const HeatmapLayout& layout, const HeatmapStyle& style);

// weights: [T, S] one head, row i = query token i, column j = key token j.
// Writes the PNG and returns its geometry (cell grid position, cell size, label boxes), which
// callers can use for hover maps. Throws Error(io, "<path>: ...") when the file cannot be written.
HeatmapLayout write_head_png(const std::string& path, const float* weights, const Visibility& visibility,
                             const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                             const HeatmapStyle& style);

}  // namespace attn_viz
