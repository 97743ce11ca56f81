// A bar chart PNG (per-head entropy and other per-head numbers).
#pragma once

#include <string>
#include <vector>

#include "font.hpp"

namespace attn_viz {

struct BarChartLayout {
    int width = 0, height = 0;
    int axis_x = 0, axis_y = 0;         // plot origin: left edge and the y = 0 line (or bottom)
    std::vector<int> bar_x, bar_w;      // per bar
    std::vector<TextPlacement> labels;  // bar labels (every k-th when crowded), rotated upward
};

// values[i] is drawn as a bar named labels[i]; the y axis starts at min(0, smallest value).
BarChartLayout write_bar_chart_png(const std::string& path, const std::vector<double>& values,
                                   const std::vector<std::string>& labels, const std::string& title,
                                   const std::string& y_label, int max_px = 1600);

}  // namespace attn_viz
