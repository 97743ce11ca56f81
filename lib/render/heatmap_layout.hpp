// Geometry of a labelled heatmap picture (per-head map, correlation matrix): where the cells,
// token labels, title and colorbar go. Shared by the PNG (heatmap.cpp) and SVG writers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "colormap.hpp"
#include "font.hpp"
#include "heatmap_grid.hpp"

namespace attn_viz {

// A labelled tick on the colorbar besides the scale's own (a chance level): "chance 0.125".
struct ReferenceTick {
    double value = 0.0;
    std::string label;
};

struct HeatmapStyle {
    std::string colormap = "viridis";
    bool log_scale = false;
    float vmin = 0.0f;                 // color range: the caller passes the head's own (--scale head) or the
    float vmax = 1.0f;                 // global one (--scale global); see visible_value_range()
    int max_px = 1600;                 // the picture is at most max_px x max_px (at least 256)
    PoolMode pool = PoolMode::max;     // a pooled map's title says so: "(3 tokens per cell, max-pooled)"
    std::optional<CellWindow> window;  // show only queries [q0, q1) x keys [k0, k1)
    std::string title;
    bool labels = true;       // token labels on both axes (--no-labels turns them off)
    bool raw_labels = false;  // labels shown as given (matrix of heads), not through display_token()
    std::string colorbar_label = "attention weight";
    std::string row_axis_label = "query";
    std::string column_axis_label = "key";
    int64_t group_size =
        0;  // > 0: a white line between every group_size rows and columns (the layers of a head-by-head matrix)
    // Drawn where its value's colour is (inside the range only); the scale's ticks within a twelfth
    // of the range of it give way.
    std::optional<ReferenceTick> reference_tick;
};

struct ColorbarTick {
    double value = 0.0;
    int y = 0;  // picture row of the tick
};

struct HeatmapLayout {
    int width = 0, height = 0;
    CellGrid cells;              // what each cell shows, with token index edges
    int grid_x = 0, grid_y = 0;  // top-left pixel of cell (0, 0)
    int cell_w = 1, cell_h = 1;  // pixels per cell
    int colorbar_x = 0, colorbar_y = 0, colorbar_w = 0, colorbar_h = 0;
    std::vector<ColorbarTick> ticks;
    TextPlacement title;
    std::vector<TextPlacement> row_labels;     // query tokens, every k-th row when crowded
    std::vector<TextPlacement> column_labels;  // key tokens, rotated upward
    std::vector<TextPlacement> other_text;     // axis names, tick numbers, colorbar label

    int grid_width() const { return static_cast<int>(cells.cols) * cell_w; }
    int grid_height() const { return static_cast<int>(cells.rows) * cell_h; }
};

// weights: [T, S] one head, row i = query token i, column j = key token j.
// query_tokens has T entries and key_tokens S entries, or either is empty (indices are shown).
// Throws Error(usage) for a bad style (colormap, window, max_px) and Error(bad_input) when the
// token lists do not match the weights.
HeatmapLayout layout_heatmap(const float* weights, const Visibility& visibility,
                             const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                             const HeatmapStyle& style);

// Tick values for a scale: 1-2-5 steps (about five) on a linear scale, powers of ten on a log one.
std::vector<double> axis_ticks(const ValueScale& scale);

// "3 tokens per cell, max-pooled" ("3 x 2 tokens per cell, ..." when rows and columns pool
// differently): what a pooled picture's title adds.
std::string pooling_note(const CellGrid& cells, PoolMode pool);

// "0.25", "1e-03": how tick values are printed.
std::string format_tick(double value);

}  // namespace attn_viz
