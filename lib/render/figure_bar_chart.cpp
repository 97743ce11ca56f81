// Bar chart PNG (see figure_bar_chart.hpp).
#include "figure_bar_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

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

// The y axis: from min(0, smallest value) to a tick at or above the tallest bar.
struct ValueAxis {
    double low = 0.0, high = 0.0;
    std::vector<double> ticks;
    int tick_w = 0;  // the widest tick number
};

ValueAxis value_axis(const std::vector<double>& values, const Font& font) {
    ValueAxis axis;
    for (double v : values)
        if (std::isfinite(v)) {
            axis.low = std::min(axis.low, v);
            axis.high = std::max(axis.high, v);
        }
    if (axis.high <= axis.low) axis.high = axis.low + 1.0;
    axis.ticks = axis_ticks(ValueScale{static_cast<float>(axis.low), static_cast<float>(axis.high), false});
    if (axis.ticks.size() >= 2 && axis.ticks.back() < axis.high) {  // end the axis on a tick above the tallest bar
        axis.ticks.push_back(axis.ticks.back() + (axis.ticks[1] - axis.ticks[0]));
        axis.high = axis.ticks.back();
    }
    for (double t : axis.ticks) axis.tick_w = std::max(axis.tick_w, font.text_width(format_tick(t), tick_px));
    return axis;
}

// Where the plot goes: left of it the tick numbers, above it the title; the bars share the
// width left after the axis, each in a slot of `pitch` pixels.
struct PlotFrame {
    int left = 0, top = 0, right = 0;
    int pitch = 0, bar_width = 0;
    double low = 0.0, high = 1.0;

    int y_of(double v) const { return top + static_cast<int>(std::lround((high - v) / (high - low) * plot_height)); }
    int slot_x(int i) const { return left + pitch / 2 + i * pitch; }  // left end of bar i's slot
};

PlotFrame plot_frame(const ValueAxis& axis, int n, const std::string& title, int max_px, const Font& font) {
    PlotFrame plot;
    plot.left = margin + font.line_height(axis_px) + 6 + axis.tick_w + 6;
    plot.top = margin + (title.empty() ? 0 : font.line_height(title_px) + 12);
    plot.pitch = std::clamp((max_px - plot.left - margin) / n, 3, 36);
    plot.bar_width = std::max(2, plot.pitch * 3 / 4);
    plot.right = plot.left + n * plot.pitch + plot.pitch / 2;
    plot.low = axis.low;
    plot.high = axis.high;
    return plot;
}

// Bar labels below the plot, every k-th bar when crowded, rotated upward with their ends aligned
// at the axis. Returns the height they take.
int place_bar_labels(BarChartLayout& layout, const std::vector<std::string>& labels, const PlotFrame& plot,
                     const Font& font) {
    const int n = static_cast<int>(labels.size()), label_line = font.line_height(label_px);
    const int stride = (label_line + plot.pitch - 1) / plot.pitch;
    int label_h = 0;
    for (int i = 0; i < n; i += stride) {
        TextPlacement p{fit_text(font, labels[static_cast<size_t>(i)], label_px, max_label_width),
                        0,
                        0,
                        label_line,
                        0,
                        label_px,
                        TextDirection::upward};
        p.height = font.text_width(p.text, label_px);
        p.x = plot.slot_x(i) + plot.pitch / 2 - label_line / 2;
        p.y = plot.top + plot_height + 6;
        label_h = std::max(label_h, p.height);
        layout.labels.push_back(p);
    }
    for (TextPlacement& p : layout.labels) p.y += label_h - p.height;  // ends of the names align at the axis
    return label_h;
}

// A light line across the plot at every tick, its number left of the axis.
void draw_grid_lines(RasterImage& image, const ValueAxis& axis, const PlotFrame& plot, const Font& font) {
    const int tick_line = font.line_height(tick_px);
    for (double t : axis.ticks) {
        const int y = plot.y_of(t);
        image.fill_rect(plot.left, y, plot.right - plot.left, 1, grid_line_color);
        const std::string text = format_tick(t);
        const int w = font.text_width(text, tick_px);
        draw_placed_text(image, {text, plot.left - 6 - w, y - tick_line / 2, w, tick_line, tick_px});
    }
}

// The bars (centred in their slots, from the y = 0 line), recorded in the layout; a non-finite
// value keeps its slot empty.
void draw_bars(RasterImage& image, BarChartLayout& layout, const std::vector<double>& values, const PlotFrame& plot) {
    const Rgb bar_color = Colormap::named("viridis").at(0.3);
    for (int i = 0; i < static_cast<int>(values.size()); ++i) {
        const int x = plot.slot_x(i) + (plot.pitch - plot.bar_width) / 2;
        layout.bar_x.push_back(x);
        layout.bar_w.push_back(plot.bar_width);
        const double v = values[static_cast<size_t>(i)];
        if (!std::isfinite(v)) continue;
        const int y_value = plot.y_of(v);
        image.fill_rect(x, std::min(y_value, layout.axis_y), plot.bar_width, std::abs(y_value - layout.axis_y),
                        bar_color);
    }
}

// The axes, the bar labels, the y axis name (rotated) and the title.
void draw_axes_and_text(RasterImage& image, const BarChartLayout& layout, const PlotFrame& plot,
                        const std::string& title, const std::string& y_label, const Font& font) {
    image.fill_rect(plot.left, plot.top, 1, plot_height + 1, text_color);
    image.fill_rect(plot.left, layout.axis_y, plot.right - plot.left, 1, text_color);
    for (const TextPlacement& p : layout.labels) draw_placed_text(image, p);
    const int y_label_w = font.text_width(y_label, axis_px);
    draw_placed_text(image, {y_label, margin, plot.top + plot_height / 2 - y_label_w / 2, font.line_height(axis_px),
                             y_label_w, axis_px, TextDirection::upward});
    if (!title.empty())
        draw_placed_text(
            image, {title, margin, margin, font.text_width(title, title_px), font.line_height(title_px), title_px});
}

}  // namespace

BarChartLayout write_bar_chart_png(const std::string& path, const std::vector<double>& values,
                                   const std::vector<std::string>& labels, const std::string& title,
                                   const std::string& y_label, int max_px) {
    if (values.empty() || values.size() != labels.size())
        throw Error(ErrorKind::internal,
                    fmt::format("bar chart {}: {} values, {} labels", path, values.size(), labels.size()));
    // Step 1: the value range and its ticks.
    const Font& font = Font::default_font();
    const ValueAxis axis = value_axis(values, font);

    // Step 2: geometry: bars share the width left after the axis, labels every k-th bar.
    const PlotFrame plot = plot_frame(axis, static_cast<int>(values.size()), title, max_px, font);
    BarChartLayout layout;
    layout.axis_x = plot.left;
    layout.axis_y = plot.y_of(0.0);
    const int label_h = place_bar_labels(layout, labels, plot, font);
    layout.width = std::max(plot.right + margin, font.text_width(title, title_px) + 2 * margin);
    layout.height = plot.top + plot_height + 6 + label_h + margin;

    // Step 3: draw grid lines with tick numbers, bars, axes, text.
    RasterImage image(layout.width, layout.height);
    draw_grid_lines(image, axis, plot, font);
    draw_bars(image, layout, values, plot);
    draw_axes_and_text(image, layout, plot, title, y_label, font);
    write_png(path, image);
    return layout;
}

}  // namespace attn_viz
