// Head-by-head matrix pictures: a heatmap with head names as labels, entries not computed (NaN)
// hatched as masked cells.
#include "figure_matrix.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "heatmap.hpp"
#include "png_writer.hpp"

namespace attn_viz {

namespace {

// The picture of a [R, C] matrix with the labels and style given.
HeatmapLayout write_labelled_matrix(const std::string& path, const Tensor& matrix,
                                    const std::vector<std::string>& row_labels,
                                    const std::vector<std::string>& column_labels, const HeatmapStyle& style) {
    Visibility all_visible;
    all_visible.queries = matrix.dim(0), all_visible.keys = matrix.dim(1);
    HeatmapLayout layout = layout_heatmap(matrix.ptr(), all_visible, row_labels, column_labels, style);
    mask_nan_cells(layout.cells, matrix.ptr(), matrix.dim(1));
    write_png(path, render_heatmap(layout, style));
    return layout;
}

HeatmapStyle matrix_style(const std::string& title, const std::string& colormap, float vmin, float vmax,
                          const std::string& value_label, int max_px) {
    HeatmapStyle style;
    style.colormap = colormap;
    style.vmin = vmin;
    style.vmax = vmax;
    style.max_px = max_px;
    style.title = title;
    style.raw_labels = true;
    style.colorbar_label = value_label;
    style.row_axis_label = style.column_axis_label = "head";
    return style;
}

}  // namespace

HeatmapLayout write_matrix_png(const std::string& path, const Tensor& matrix, const std::vector<std::string>& labels,
                               const std::string& title, const std::string& colormap, float vmin, float vmax,
                               const std::string& value_label, int max_px, int64_t group_size,
                               const std::optional<ReferenceTick>& reference) {
    if (matrix.rank() != 2 || matrix.dim(0) != matrix.dim(1) || static_cast<int64_t>(labels.size()) != matrix.dim(0))
        throw Error(ErrorKind::internal, fmt::format("matrix picture {}: matrix {} with {} labels", path,
                                                     shape_string(matrix.shape), labels.size()));
    HeatmapStyle style = matrix_style(title, colormap, vmin, vmax, value_label, max_px);
    style.group_size = group_size;
    style.reference_tick = reference;
    return write_labelled_matrix(path, matrix, labels, labels, style);
}

HeatmapLayout write_rectangular_matrix_png(const std::string& path, const Tensor& matrix, const MatrixAxes& axes,
                                           const std::string& title, const std::string& colormap, float vmin,
                                           float vmax, const std::string& value_label, int max_px, PoolMode pool) {
    if (matrix.rank() != 2 || static_cast<int64_t>(axes.row_labels.size()) != matrix.dim(0) ||
        static_cast<int64_t>(axes.column_labels.size()) != matrix.dim(1))
        throw Error(ErrorKind::internal,
                    fmt::format("matrix picture {}: matrix {} with {} row and {} column labels", path,
                                shape_string(matrix.shape), axes.row_labels.size(), axes.column_labels.size()));
    HeatmapStyle style = matrix_style(title, colormap, vmin, vmax, value_label, max_px);
    style.row_axis_label = axes.row_axis, style.column_axis_label = axes.column_axis;
    style.pool = pool;
    return write_labelled_matrix(path, matrix, axes.row_labels, axes.column_labels, style);
}

}  // namespace attn_viz
