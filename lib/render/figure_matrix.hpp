// Head-by-head matrices (correlation, Jensen-Shannon divergence) and other labelled matrices (a
// score's query-side x key-side terms) as heatmaps.
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

// The names on a rectangular matrix's axes: a label per row and per column, and what each axis is.
struct MatrixAxes {
    std::vector<std::string> row_labels, column_labels;
    std::string row_axis = "head", column_axis = "head";
};

// matrix: [R, C] with R row labels and C column labels, otherwise as write_matrix_png (no group
// lines); pool: how cells are pooled when the matrix is larger than the picture (a signed matrix
// whose cells add up, as terms of a sum do, is better mean-pooled than max-pooled).
HeatmapLayout write_rectangular_matrix_png(const std::string& path, const Tensor& matrix, const MatrixAxes& axes,
                                           const std::string& title, const std::string& colormap, float vmin,
                                           float vmax, const std::string& value_label, int max_px = 1600,
                                           PoolMode pool = PoolMode::max);

}  // namespace attn_viz
