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

// Values drawn over [low, high] (from range_top()).
RasterImage panel(const float* values, const Visibility& visibility, const std::vector<std::string>& query_tokens,
                  const std::vector<std::string>& key_tokens, HeatmapStyle style, float low, float high,
                  const std::string& title) {
    style.vmin = low;
    style.vmax = high;
    style.title = title;
    return render_heatmap(layout_heatmap(values, visibility, query_tokens, key_tokens, style), style);
}

// The top of a color range whose largest value is `largest`: 1 when it is 0 (all-zero maps, no
// change), so zero is drawn as zero (or the middle of the diverging scale), not as an end of it.
float range_top(float largest) { return largest > 0.0f ? largest : 1.0f; }

}  // namespace

std::vector<float> signed_difference(const float* a, const float* b, const Visibility& visibility) {
    std::vector<float> difference(static_cast<size_t>(visibility.queries * visibility.keys), 0.0f);
    for (int64_t i = 0; i < visibility.queries; ++i)
        for (int64_t j = 0; j < visibility.keys; ++j)
            if (visibility.visible(i, j)) {
                const int64_t at = i * visibility.keys + j;
                difference[static_cast<size_t>(at)] = a[at] - b[at];
            }
    return difference;
}

void write_map_comparison_png(const std::string& path, const float* a, const float* b, const Visibility& visibility,
                              const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                              const HeatmapStyle& style, const MapComparisonTitles& titles) {
    const float shared =
        range_top(std::max(visible_value_range(a, visibility).vmax, visible_value_range(b, visibility).vmax));
    const std::vector<float> difference = signed_difference(a, b, visibility);
    float largest_change = 0.0f;
    for (const float d : difference) largest_change = std::max(largest_change, std::fabs(d));
    largest_change = range_top(largest_change);
    HeatmapStyle change_style = style;
    change_style.colormap = diverging_colormap;
    change_style.colorbar_label = "A - B";
    change_style.log_scale = false;
    write_png(path, side_by_side({panel(a, visibility, query_tokens, key_tokens, style, 0.0f, shared, titles.a),
                                  panel(b, visibility, query_tokens, key_tokens, style, 0.0f, shared, titles.b),
                                  panel(difference.data(), visibility, query_tokens, key_tokens, change_style,
                                        -largest_change, largest_change, titles.difference)}));
}

}  // namespace attn_viz
