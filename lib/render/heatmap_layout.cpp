// Heatmap geometry: label sizes decide the margins, the pixel budget decides pooling and cell
// size, the cell size decides how many labels fit (see heatmap_layout.hpp).
#include "heatmap_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "colormap.hpp"
#include "error.hpp"
#include "figure_style.hpp"
#include "token_display.hpp"

namespace attn_viz {

namespace {

using namespace figure_style;
constexpr int label_gap = 6;  // between labels and the grid
constexpr int max_cell_px = 48;
constexpr int colorbar_gap = 24;
constexpr int colorbar_width = 16;
constexpr int min_colorbar_height = 160;
constexpr int tick_length = 4;

struct LabelMaker {
    const Font& font;
    const std::vector<std::string>& tokens;
    int64_t first = 0, last = 0;  // the labelled tokens [first, last)
    bool raw = false;  // show as given, not as tokenizer tokens
    bool with_index = false;
    mutable int widest_px[2] = {-1, -1};  // widest() without and with the index prefix, once measured

    std::string text(int64_t index) const {
        if (tokens.empty()) return std::to_string(index);
        std::string shown = tokens[static_cast<size_t>(index)];
        if (!raw) shown = display_token(tokens[static_cast<size_t>(index)]);
        if (with_index) {
            std::string prefix(1, '#');
            prefix += std::to_string(index);
            prefix += ' ';
            shown = prefix + shown;
        }
        return fit_text(font, shown, label_px, max_label_width);
    }
    // Width of the widest label in [first, last): measured once per prefix choice (the layout
    // passes ask again, and T can be thousands of labels).
    int widest() const {
        int& widest = widest_px[with_index ? 1 : 0];
        if (widest >= 0) return widest;
        widest = 0;
        for (int64_t i = first; i < last; ++i) widest = std::max(widest, font.text_width(text(i), label_px));
        return widest;
    }
};

int64_t pooled_count(int64_t n, int64_t budget) {
    const int64_t block = (n + budget - 1) / budget;
    return (n + block - 1) / block;
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

std::vector<double> axis_ticks(const ValueScale& scale) {
    std::vector<double> values;
    if (scale.log_scale) {
        const double low = scale.log_floor(), high = scale.vmax;
        for (int e = static_cast<int>(std::ceil(std::log10(low) - 1e-9)); std::pow(10.0, e) <= high * (1 + 1e-9); ++e)
            values.push_back(std::pow(10.0, e));
        if (values.size() < 2) values = {low, static_cast<double>(high)};
        return values;
    }
    const double range = static_cast<double>(scale.vmax) - scale.vmin;
    if (!(range > 0)) return {static_cast<double>(scale.vmin)};
    const double rough = range / 5.0, power = std::pow(10.0, std::floor(std::log10(rough)));
    double step = power * 10;
    for (double m : {1.0, 2.0, 5.0})
        if (m * power >= rough) { step = m * power; break; }
    for (double v = std::ceil(scale.vmin / step - 1e-9) * step; v <= scale.vmax + step * 1e-9; v += step)
        values.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return values;
}

std::string format_tick(double value) {
    char text[32];
    if (value == 0.0) return "0";
    if (std::abs(value) >= 1e-3 && std::abs(value) < 1e4) std::snprintf(text, sizeof text, "%.3g", value);
    else std::snprintf(text, sizeof text, "%.0e", value);
    return text;
}

HeatmapLayout layout_heatmap(const float* weights, const Visibility& visibility,
                             const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                             const HeatmapStyle& style) {
    // Step 1: check what we were given.
    const int64_t queries = visibility.queries, keys = visibility.keys;
    if (queries < 1 || keys < 1)
        throw Error(ErrorKind::internal, "heatmap: empty attention map " + std::to_string(queries) + "x" + std::to_string(keys));
    if (!query_tokens.empty() && static_cast<int64_t>(query_tokens.size()) != queries)
        fail_input("heatmap", std::to_string(query_tokens.size()) + " query tokens for " + std::to_string(queries) + " queries");
    if (!key_tokens.empty() && static_cast<int64_t>(key_tokens.size()) != keys)
        fail_input("heatmap", std::to_string(key_tokens.size()) + " key tokens for " + std::to_string(keys) + " keys");
    if (style.max_px < 256) throw Error(ErrorKind::usage, "--max-px: " + std::to_string(style.max_px) + " is too small (at least 256)");
    Colormap::named(style.colormap);  // rejects an unknown name before any work
    CellWindow area{0, queries, 0, keys};
    if (style.window) {
        check_cell_window(*style.window, queries, keys);
        area = *style.window;
    }

    // Step 2: fixed parts: title, colorbar with its tick numbers.
    const Font& font = Font::default_font();
    const int label_line = font.line_height(label_px), axis_line = font.line_height(axis_px);
    const int tick_line = font.line_height(tick_px);
    const int title_height = style.title.empty() ? 0 : font.line_height(title_px) + 10;
    const ValueScale scale{style.vmin, style.vmax, style.log_scale};
    const std::vector<double> ticks = axis_ticks(scale);
    int tick_text_width = 0;
    for (double v : ticks) tick_text_width = std::max(tick_text_width, font.text_width(format_tick(v), tick_px));
    const int colorbar_area = colorbar_gap + colorbar_width + tick_length + 4 + tick_text_width + 8 + axis_line;

    // Step 3: label space, pixel budget, pooling and cell size. Labels get an index prefix when
    // they are thinned out or pooled; that widens them, so settle it in at most two passes.
    LabelMaker rows_maker{font, query_tokens, area.q0, area.q1, style.raw_labels};
    LabelMaker cols_maker{font, key_tokens, area.k0, area.k1, style.raw_labels};
    const bool same_labels = area.q0 == area.k0 && area.q1 == area.k1 && query_tokens == key_tokens;  // self-attention
    bool labels = style.labels;
    int budget = 0, cell = 1, left = margin, top = margin + title_height, row_stride = 1, col_stride = 1;
    int64_t rows = 0, cols = 0;
    for (int pass = 0; pass < 4; ++pass) {
        left = margin;
        top = margin + title_height;
        if (labels) {
            const int row_labels_px = rows_maker.widest();
            left += axis_line + 4 + row_labels_px + label_gap;
            top += axis_line + 4 + (same_labels ? row_labels_px : cols_maker.widest()) + label_gap;
        }
        budget = std::min(style.max_px - left - colorbar_area - margin, style.max_px - top - margin);
        if (budget < 48 && labels) {
            labels = false;
            continue;
        }
        budget = std::max(budget, 16);
        rows = pooled_count(area.q1 - area.q0, budget);
        cols = pooled_count(area.k1 - area.k0, budget);
        cell = std::clamp<int>(budget / static_cast<int>(std::max(rows, cols)), 1, max_cell_px);
        row_stride = ceil_div(label_line + 1, cell);
        col_stride = row_stride;
        const bool pooled = rows < area.q1 - area.q0 || cols < area.k1 - area.k0;
        const bool want_index = labels && (row_stride > 1 || pooled);
        if (want_index == rows_maker.with_index) break;
        rows_maker.with_index = cols_maker.with_index = want_index;
    }

    // Step 4: the cells.
    HeatmapLayout layout;
    layout.cells = build_cell_grid(weights, visibility, area, budget, budget, style.pool);
    layout.cell_w = layout.cell_h = cell;
    layout.grid_x = left;
    layout.grid_y = top;
    const int grid_w = layout.grid_width(), grid_h = layout.grid_height();

    // Step 5: token labels (every stride-th cell, centred on it) and axis names.
    if (labels) {
        for (int64_t r = 0; r < layout.cells.rows; r += row_stride) {
            TextPlacement p{rows_maker.text(layout.cells.row_edges[static_cast<size_t>(r)]), 0, 0, 0, label_line, label_px};
            p.width = font.text_width(p.text, label_px);
            p.x = left - label_gap - p.width;
            p.y = top + static_cast<int>(r) * cell + cell / 2 - label_line / 2;
            layout.row_labels.push_back(p);
        }
        for (int64_t c = 0; c < layout.cells.cols; c += col_stride) {
            TextPlacement p{cols_maker.text(layout.cells.col_edges[static_cast<size_t>(c)]), 0, 0, label_line, 0, label_px,
                            TextDirection::upward};
            p.height = font.text_width(p.text, label_px);
            p.x = left + static_cast<int>(c) * cell + cell / 2 - label_line / 2;
            p.y = top - label_gap - p.height;
            layout.column_labels.push_back(p);
        }
        TextPlacement row_name{style.row_axis_label, margin, 0, axis_line, font.text_width(style.row_axis_label, axis_px),
                               axis_px, TextDirection::upward};
        row_name.y = std::max(top, top + grid_h / 2 - row_name.height / 2);
        TextPlacement col_name{style.column_axis_label, 0, margin + title_height, font.text_width(style.column_axis_label, axis_px),
                               axis_line, axis_px};
        col_name.x = std::max(left, left + grid_w / 2 - col_name.width / 2);
        layout.other_text.push_back(row_name);
        layout.other_text.push_back(col_name);
    }

    // Step 6: colorbar beside the grid, ticks and their numbers, its label rotated.
    layout.colorbar_x = left + grid_w + colorbar_gap;
    layout.colorbar_y = top;
    layout.colorbar_w = colorbar_width;
    layout.colorbar_h = std::max(grid_h, std::min(min_colorbar_height, style.max_px - top - margin));
    const int tick_text_x = layout.colorbar_x + colorbar_width + tick_length + 4;
    for (double v : ticks) {
        const int y = layout.colorbar_y + static_cast<int>(std::lround((1.0 - scale.position(static_cast<float>(v))) * (layout.colorbar_h - 1)));
        layout.ticks.push_back({v, y});
        const std::string text = format_tick(v);
        layout.other_text.push_back({text, tick_text_x, y - tick_line / 2, font.text_width(text, tick_px), tick_line, tick_px});
    }
    const std::string bar_label = fit_text(font, style.colorbar_label + (style.log_scale ? " (log scale)" : ""), axis_px,
                                           std::max(layout.colorbar_h, 40));
    TextPlacement bar_name{bar_label, tick_text_x + tick_text_width + 8, 0, axis_line, font.text_width(bar_label, axis_px),
                           axis_px, TextDirection::upward};
    bar_name.y = layout.colorbar_y + std::max(0, layout.colorbar_h / 2 - bar_name.height / 2);
    layout.other_text.push_back(bar_name);

    // Step 7: picture size, and the title fitted into it.
    layout.width = bar_name.x + axis_line + margin;
    layout.height = std::max({top + grid_h, layout.colorbar_y + layout.colorbar_h, bar_name.y + bar_name.height}) + margin;
    if (!style.title.empty()) {
        layout.width = std::min(style.max_px, std::max(layout.width, font.text_width(style.title, title_px) + 2 * margin));
        layout.title.text = fit_text(font, style.title, title_px, layout.width - 2 * margin);
        layout.title = {layout.title.text, margin, margin, font.text_width(layout.title.text, title_px), font.line_height(title_px), title_px};
    }
    return layout;
}

}  // namespace attn_viz
