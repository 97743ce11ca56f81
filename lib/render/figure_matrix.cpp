// Head-by-head matrix pictures: a heatmap with no masked cells and head names as labels.
#include "figure_matrix.hpp"

#include "error.hpp"
#include "heatmap.hpp"

namespace attn_viz {

HeatmapLayout write_matrix_png(const std::string& path, const Tensor& matrix, const std::vector<std::string>& labels,
                               const std::string& title, const std::string& colormap, float vmin, float vmax,
                               const std::string& value_label, int max_px, int64_t group_size) {
    if (matrix.rank() != 2 || matrix.dim(0) != matrix.dim(1) || static_cast<int64_t>(labels.size()) != matrix.dim(0))
        throw Error(ErrorKind::internal, "matrix picture " + path + ": matrix " + shape_string(matrix.shape) + " with " +
                                             std::to_string(labels.size()) + " labels");
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
    return write_head_png(path, matrix.ptr(), all_visible, labels, labels, style);
}

}  // namespace attn_viz
