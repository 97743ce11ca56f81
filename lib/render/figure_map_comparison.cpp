#include "figure_map_comparison.hpp"

#include <algorithm>
#include <cmath>

#include "heatmap.hpp"
#include "heatmap_grid.hpp"
#include "png_writer.hpp"

namespace attn_viz {
namespace {

// The panels next to each other, top-aligned, on the background color.
RasterImage side_by_side(const std::vector<RasterImage>& panels) {
    int width = 0, height = 0;
    for (const RasterImage& p : panels) width += p.width, height = std::max(height, p.height);
    RasterImage canvas(width, height);
    int x0 = 0;
    for (const RasterImage& p : panels) {
        for (int y = 0; y < p.height; ++y)
            for (int x = 0; x < p.width; ++x) canvas.set_pixel(x0 + x, y, p.pixel(x, y));
        x0 += p.width;
    }
    return canvas;
}

RasterImage panel(const float* weights, const Visibility& visibility, const std::vector<std::string>& query_tokens,
                  const std::vector<std::string>& key_tokens, HeatmapStyle style, float vmax, const std::string& title) {
    style.vmin = 0.0f;
    style.vmax = vmax > 0.0f ? vmax : 1.0f;  // an all-zero difference is drawn as zero, not as the top of a scale
    style.title = title;
    return render_heatmap(layout_heatmap(weights, visibility, query_tokens, key_tokens, style), style);
}

}  // namespace

std::vector<float> absolute_difference(const float* a, const float* b, const Visibility& visibility) {
    std::vector<float> difference(static_cast<size_t>(visibility.queries * visibility.keys), 0.0f);
    for (int64_t i = 0; i < visibility.queries; ++i)
        for (int64_t j = 0; j < visibility.keys; ++j)
            if (visibility.visible(i, j)) {
                const int64_t at = i * visibility.keys + j;
                difference[static_cast<size_t>(at)] = std::fabs(b[at] - a[at]);
            }
    return difference;
}

void write_map_comparison_png(const std::string& path, const float* a, const float* b, const Visibility& visibility,
                              const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                              const HeatmapStyle& style, const MapComparisonTitles& titles) {
    const float shared = std::max(visible_value_range(a, visibility).vmax, visible_value_range(b, visibility).vmax);
    const std::vector<float> difference = absolute_difference(a, b, visibility);
    const float largest_change = *std::max_element(difference.begin(), difference.end());
    HeatmapStyle change_style = style;
    change_style.colormap = "magma";
    change_style.colorbar_label = "|B - A|";
    change_style.log_scale = false;
    write_png(path, side_by_side({panel(a, visibility, query_tokens, key_tokens, style, shared, titles.a),
                                  panel(b, visibility, query_tokens, key_tokens, style, shared, titles.b),
                                  panel(difference.data(), visibility, query_tokens, key_tokens, change_style, largest_change,
                                        titles.difference)}));
}

}  // namespace attn_viz
