// Layers x heads pictures of one number per head (see figure_head_grid.hpp).
#include "figure_head_grid.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "heatmap.hpp"
#include "png_writer.hpp"

namespace attn_viz {

ValueRange head_grid_range(const std::vector<float>& values, const HeadGridStyle& style) {
    float smallest = 0.0f, largest = 0.0f;
    for (const float v : values)
        if (std::isfinite(v)) smallest = std::min(smallest, v), largest = std::max(largest, v);
    if (style.signed_values) {
        const float m = std::max({std::abs(style.low.value_or(smallest)), std::abs(style.high.value_or(largest)),
                                  std::numeric_limits<float>::min()});
        return {-m, m};
    }
    ValueRange range{style.low.value_or(smallest), style.high.value_or(largest)};
    if (!(range.vmax > range.vmin)) range.vmax = range.vmin + 1.0f;  // all values equal: drawn at their value
    return range;
}

HeatmapLayout write_head_grid_png(const std::string& path, const std::vector<float>& values, int64_t layers,
                                  int64_t heads, const HeadGridStyle& grid) {
    if (static_cast<int64_t>(values.size()) != layers * heads)
        throw Error(ErrorKind::internal, fmt::format("head grid picture {}: {} values for {} x {} heads", path,
                                                     values.size(), layers, heads));
    std::vector<std::string> layer_names, head_names;
    for (int64_t l = 0; l < layers; ++l) layer_names.push_back(fmt::format("L{}", l));
    for (int64_t h = 0; h < heads; ++h) head_names.push_back(fmt::format("H{}", h));
    const ValueRange range = head_grid_range(values, grid);
    HeatmapStyle style;
    style.colormap = grid.signed_values ? diverging_colormap : grid.colormap;
    style.log_scale = grid.log_scale && !grid.signed_values;
    style.vmin = range.vmin, style.vmax = range.vmax, style.max_px = grid.max_px;
    style.title = grid.title, style.colorbar_label = grid.value_label;
    style.raw_labels = true, style.row_axis_label = "layer", style.column_axis_label = "head";
    Visibility all;
    all.queries = layers, all.keys = heads;
    HeatmapLayout layout = layout_heatmap(values.data(), all, layer_names, head_names, style);
    mask_nan_cells(layout.cells, values.data(), heads);
    write_png(path, render_heatmap(layout, style));
    return layout;
}

}  // namespace attn_viz
