// Head-by-head matrices (correlation, Jensen-Shannon divergence) as labelled heatmaps.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "heatmap_layout.hpp"
#include "tensor.hpp"

namespace attn_viz {

// matrix: [N, N]; labels: N names ("L0 H3"), shown as given on both axes. NaN entries (pairs
// not computed) are hatched like masked cells, never colored (a pooled cell only when all of
// its entries are NaN; max-pooling skips them otherwise).
// Colors span [vmin, vmax] (correlation: -1, 1 with diverging_colormap); value_label names the
// colorbar. group_size > 0 draws a white line between every group_size heads (one layer's heads).
// reference: a labelled colorbar tick (a chance level), or none.
HeatmapLayout write_matrix_png(const std::string& path, const Tensor& matrix, const std::vector<std::string>& labels,
                               const std::string& title, const std::string& colormap, float vmin, float vmax,
                               const std::string& value_label, int max_px = 1600, int64_t group_size = 0,
                               const std::optional<ReferenceTick>& reference = std::nullopt);

}  // namespace attn_viz
