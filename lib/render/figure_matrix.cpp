// Head-by-head matrix pictures: a heatmap with head names as labels, entries not computed (NaN)
// hatched as masked cells.
#include "figure_matrix.hpp"

#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "heatmap.hpp"
#include "png_writer.hpp"

namespace attn_viz {

namespace {

// Marks masked every cell of `cells` whose block of `matrix` ([N, N]) holds only NaN entries
// (pairs that were not computed), so that it is hatched instead of taking a color.
void mask_uncomputed(CellGrid& cells, const Tensor& matrix) {
    const int64_t n = matrix.dim(1);
    for (int64_t r = 0; r < cells.rows; ++r)
        for (int64_t c = 0; c < cells.cols; ++c) {
            bool any_computed = false;
            for (int64_t i = cells.row_edges[static_cast<size_t>(r)];
                 i < cells.row_edges[static_cast<size_t>(r + 1)] && !any_computed; ++i)
                for (int64_t j = cells.col_edges[static_cast<size_t>(c)];
                     j < cells.col_edges[static_cast<size_t>(c + 1)]; ++j)
                    if (!std::isnan(matrix.data[static_cast<size_t>(i * n + j)])) {
                        any_computed = true;
                        break;
                    }
            if (!any_computed) cells.masked[static_cast<size_t>(r * cells.cols + c)] = 1;
        }
}

}  // namespace

HeatmapLayout write_matrix_png(const std::string& path, const Tensor& matrix, const std::vector<std::string>& labels,
                               const std::string& title, const std::string& colormap, float vmin, float vmax,
                               const std::string& value_label, int max_px, int64_t group_size) {
    if (matrix.rank() != 2 || matrix.dim(0) != matrix.dim(1) || static_cast<int64_t>(labels.size()) != matrix.dim(0))
        throw Error(ErrorKind::internal, fmt::format("matrix picture {}: matrix {} with {} labels", path,
                                                     shape_string(matrix.shape), labels.size()));
    Visibility all_visible;
    all_visible.queries = all_visible.keys = matrix.dim(0);
    HeatmapStyle style;
    style.colormap = colormap;
    style.vmin = vmin;
    style.vmax = vmax;
    style.max_px = max_px;
    style.title = title;
    style.raw_labels = true;
    style.colorbar_label = value_label;
    style.row_axis_label = style.column_axis_label = "head";
    style.group_size = group_size;
    HeatmapLayout layout = layout_heatmap(matrix.ptr(), all_visible, labels, labels, style);
    mask_uncomputed(layout.cells, matrix);
    write_png(path, render_heatmap(layout, style));
    return layout;
}

}  // namespace attn_viz
