// Head-by-head matrix pictures: a heatmap with head names as labels, entries not computed (NaN)
// hatched as masked cells.
#include "figure_matrix.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "heatmap.hpp"
#include "png_writer.hpp"

namespace attn_viz {

HeatmapLayout write_matrix_png(const std::string& path, const Tensor& matrix, const std::vector<std::string>& labels,
                               const std::string& title, const std::string& colormap, float vmin, float vmax,
                               const std::string& value_label, int max_px, int64_t group_size,
                               const std::optional<ReferenceTick>& reference) {
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
    style.reference_tick = reference;
    HeatmapLayout layout = layout_heatmap(matrix.ptr(), all_visible, labels, labels, style);
    mask_nan_cells(layout.cells, matrix.ptr(), matrix.dim(1));
    write_png(path, render_heatmap(layout, style));
    return layout;
}

}  // namespace attn_viz
