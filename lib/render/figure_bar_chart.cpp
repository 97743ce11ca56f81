// Bar chart PNG (see figure_bar_chart.hpp).
#include "figure_bar_chart.hpp"

#include <algorithm>
#include <cmath>

#include "colormap.hpp"
#include "error.hpp"
#include "figure_style.hpp"
#include "heatmap_layout.hpp"
#include "png_writer.hpp"

namespace attn_viz {

namespace {

using namespace figure_style;
constexpr int plot_height = 360;
constexpr Rgb grid_line_color{228, 228, 228};

}  // namespace

BarChartLayout write_bar_chart_png(const std::string& path, const std::vector<double>& values,
                                   const std::vector<std::string>& labels, const std::string& title,
                                   const std::string& y_label, int max_px) {
    if (values.empty() || values.size() != labels.size())
        throw Error(ErrorKind::internal, "bar chart " + path + ": " + std::to_string(values.size()) + " values, " +
                                             std::to_string(labels.size()) + " labels");
    // Step 1: the value range and its ticks.
    const Font& font = Font::default_font();
    double low = 0.0, high = 0.0;
    for (double v : values)
        if (std::isfinite(v)) { low = std::min(low, v); high = std::max(high, v); }
    if (high <= low) high = low + 1.0;
    std::vector<double> ticks = axis_ticks(ValueScale{static_cast<float>(low), static_cast<float>(high), false});
    if (ticks.size() >= 2 && ticks.back() < high) {  // end the axis on a tick above the tallest bar
        ticks.push_back(ticks.back() + (ticks[1] - ticks[0]));
        high = ticks.back();
    }
    int tick_w = 0;
    for (double t : ticks) tick_w = std::max(tick_w, font.text_width(format_tick(t), tick_px));

    // Step 2: geometry: bars share the width left after the axis, labels every k-th bar.
    const int n = static_cast<int>(values.size());
    const int axis_line = font.line_height(axis_px), label_line = font.line_height(label_px), tick_line = font.line_height(tick_px);
    BarChartLayout layout;
    layout.axis_x = margin + axis_line + 6 + tick_w + 6;
    const int top = margin + (title.empty() ? 0 : font.line_height(title_px) + 12);
    const int pitch = std::clamp((max_px - layout.axis_x - margin) / n, 3, 36);
    const int bar_width = std::max(2, pitch * 3 / 4);
    const int stride = (label_line + pitch - 1) / pitch;
    auto y_of = [&](double v) { return top + static_cast<int>(std::lround((high - v) / (high - low) * plot_height)); };
    layout.axis_y = y_of(0.0);
    const int plot_right = layout.axis_x + n * pitch + pitch / 2;
    int label_h = 0;
    for (int i = 0; i < n; i += stride) {
        TextPlacement p{fit_text(font, labels[static_cast<size_t>(i)], label_px, max_label_width), 0, 0, label_line, 0, label_px,
                        TextDirection::upward};
        p.height = font.text_width(p.text, label_px);
        p.x = layout.axis_x + pitch / 2 + i * pitch + pitch / 2 - label_line / 2;
        p.y = top + plot_height + 6;
        label_h = std::max(label_h, p.height);
        layout.labels.push_back(p);
    }
    for (TextPlacement& p : layout.labels) p.y += label_h - p.height;  // ends of the names align at the axis
    layout.width = std::max(plot_right + margin, font.text_width(title, title_px) + 2 * margin);
    layout.height = top + plot_height + 6 + label_h + margin;

    // Step 3: draw grid lines with tick numbers, bars, axes, text.
    RasterImage image(layout.width, layout.height);
    for (double t : ticks) {
        const int y = y_of(t);
        image.fill_rect(layout.axis_x, y, plot_right - layout.axis_x, 1, grid_line_color);
        const std::string text = format_tick(t);
        const int w = font.text_width(text, tick_px);
        draw_placed_text(image, {text, layout.axis_x - 6 - w, y - tick_line / 2, w, tick_line, tick_px});
    }
    const Rgb bar_color = Colormap::named("viridis").at(0.3);
    for (int i = 0; i < n; ++i) {
        const int x = layout.axis_x + pitch / 2 + i * pitch + (pitch - bar_width) / 2;
        layout.bar_x.push_back(x);
        layout.bar_w.push_back(bar_width);
        const double v = values[static_cast<size_t>(i)];
        if (!std::isfinite(v)) continue;
        const int y_value = y_of(v);
        image.fill_rect(x, std::min(y_value, layout.axis_y), bar_width, std::abs(y_value - layout.axis_y), bar_color);
    }
    image.fill_rect(layout.axis_x, top, 1, plot_height + 1, text_color);
    image.fill_rect(layout.axis_x, layout.axis_y, plot_right - layout.axis_x, 1, text_color);
    for (const TextPlacement& p : layout.labels) draw_placed_text(image, p);
    const int y_label_w = font.text_width(y_label, axis_px);
    draw_placed_text(image, {y_label, margin, top + plot_height / 2 - y_label_w / 2, axis_line, y_label_w, axis_px, TextDirection::upward});
    if (!title.empty())
        draw_placed_text(image, {title, margin, margin, font.text_width(title, title_px), font.line_height(title_px), title_px});
    write_png(path, image);
    return layout;
}

}  // namespace attn_viz
