#include "head_effect_outputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "colormap.hpp"
#include "heatmap.hpp"

namespace attn_viz {

void write_layer_head_png(const std::string& path, const std::vector<float>& values, int64_t layers, int64_t heads,
                          const std::string& title, const std::string& value_label, const ReportOptions& o, bool signed_values) {
    std::vector<std::string> layer_names, head_names;
    for (int64_t l = 0; l < layers; ++l) layer_names.push_back("L" + std::to_string(l));
    for (int64_t h = 0; h < heads; ++h) head_names.push_back("H" + std::to_string(h));
    const Visibility all{layers, heads, false, {}};
    HeatmapStyle style;
    style.colormap = o.style.colormap, style.max_px = o.style.max_px;
    const ValueRange range = visible_value_range(values.data(), all);
    style.vmin = range.vmin, style.vmax = range.vmax;
    if (signed_values) {
        const float largest = std::max({std::abs(range.vmin), std::abs(range.vmax), 1e-12f});
        style.colormap = diverging_colormap, style.vmin = -largest, style.vmax = largest;
    }
    style.title = title, style.colorbar_label = value_label;
    style.raw_labels = true, style.row_axis_label = "layer", style.column_axis_label = "head";
    write_head_png(path, values.data(), all, layer_names, head_names, style);
}

std::string short_number(double x, const char* format) {
    char text[32];
    std::snprintf(text, sizeof text, format, x);
    return text;
}

}  // namespace attn_viz
