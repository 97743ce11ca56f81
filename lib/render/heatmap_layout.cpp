// Heatmap geometry: label sizes decide the margins, the pixel budget decides pooling and cell
// size, the cell size decides how many labels fit (see heatmap_layout.hpp).
#include "heatmap_layout.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "colormap.hpp"
#include "error.hpp"
#include "figure_style.hpp"
#include "token_display.hpp"

namespace attn_viz {

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
        if (m * power >= rough) {
            step = m * power;
            break;
        }
    for (double v = std::ceil(scale.vmin / step - 1e-9) * step; v <= scale.vmax + step * 1e-9; v += step)
        values.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return values;
}

std::string format_tick(double value) {
    if (value == 0.0) return "0";
    if (std::abs(value) >= 1e-3 && std::abs(value) < 1e4) return fmt::format("{:.3g}", value);
    return fmt::format("{:.0e}", value);
}

std::string pooling_note(const CellGrid& cells, PoolMode pool) {
    const int64_t rows = cells.row_edges[1] - cells.row_edges[0], cols = cells.col_edges[1] - cells.col_edges[0];
    const std::string block = rows == cols ? fmt::to_string(rows) : fmt::format("{} x {}", rows, cols);
    return fmt::format("{} tokens per cell, {}-pooled", block, pool == PoolMode::max ? "max" : "mean");
}

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
    bool raw = false;             // show as given, not as tokenizer tokens
    bool with_index = false;
    mutable int widest_px[2] = {-1, -1};  // widest() without and with the index prefix, once measured

    std::string text(int64_t index) const {
        if (tokens.empty()) return fmt::to_string(index);
        std::string shown = tokens[static_cast<size_t>(index)];
        if (!raw) shown = display_token(tokens[static_cast<size_t>(index)]);
        if (with_index) shown = fmt::format("#{} {}", index, shown);
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

// Line heights of the text sizes a heatmap uses, and the band its title takes (0 without one).
struct TextLines {
    int label = 0, axis = 0, tick = 0, title_band = 0;
};

TextLines text_lines(const Font& font, const std::string& title) {
    return {font.line_height(label_px), font.line_height(axis_px), font.line_height(tick_px),
            title.empty() ? 0 : font.line_height(title_px) + 10};
}

// Checks what layout_heatmap was given; returns the rectangle of the map to show (all of it
// unless windowed).
CellWindow checked_area(const Visibility& visibility, const std::vector<std::string>& query_tokens,
                        const std::vector<std::string>& key_tokens, const HeatmapStyle& style) {
    const int64_t queries = visibility.queries, keys = visibility.keys;
    if (queries < 1 || keys < 1)
        throw Error(ErrorKind::internal, fmt::format("heatmap: empty attention map {}x{}", queries, keys));
    if (!query_tokens.empty() && static_cast<int64_t>(query_tokens.size()) != queries)
        fail_input("heatmap", fmt::format("{} query tokens for {} queries", query_tokens.size(), queries));
    if (!key_tokens.empty() && static_cast<int64_t>(key_tokens.size()) != keys)
        fail_input("heatmap", fmt::format("{} key tokens for {} keys", key_tokens.size(), keys));
    if (style.max_px < 256)
        throw Error(ErrorKind::usage, fmt::format("a picture side of {} px is too small (at least 256)", style.max_px));
    Colormap::named(style.colormap);  // rejects an unknown name before any work
    CellWindow area{0, queries, 0, keys};
    if (style.window) {
        check_cell_window(*style.window, queries, keys);
        area = *style.window;
    }
    return area;
}

// The colorbar's value scale and tick values, and the width it takes right of the grid (gap,
// bar, ticks, their numbers, its rotated label).
struct ColorbarScale {
    ValueScale scale;
    std::vector<double> ticks;
    std::vector<std::string> tick_texts;  // one per tick
    int tick_text_width = 0;
    int area_width = 0;
};

ColorbarScale colorbar_scale(const Font& font, const HeatmapStyle& style, const TextLines& lines) {
    ColorbarScale bar{ValueScale{style.vmin, style.vmax, style.log_scale}, {}, {}, 0, 0};
    const std::optional<ReferenceTick>& reference = style.reference_tick;
    const bool marked = reference && reference->value >= style.vmin && reference->value <= style.vmax;
    const auto position = [&](double v) { return bar.scale.position(static_cast<float>(v)); };
    for (double v : axis_ticks(bar.scale))
        if (!marked || std::abs(position(v) - position(reference->value)) >= 1.0 / 12)
            bar.ticks.push_back(v), bar.tick_texts.push_back(format_tick(v));
    if (marked) {
        const auto at = std::upper_bound(bar.ticks.begin(), bar.ticks.end(), reference->value);
        bar.tick_texts.insert(bar.tick_texts.begin() + (at - bar.ticks.begin()), reference->label);
        bar.ticks.insert(at, reference->value);
    }
    for (const std::string& text : bar.tick_texts)
        bar.tick_text_width = std::max(bar.tick_text_width, font.text_width(text, tick_px));
    bar.area_width = colorbar_gap + colorbar_width + tick_length + 4 + bar.tick_text_width + 8 + lines.axis;
    return bar;
}

// Where the grid starts, the cells it may have per side (the pooling budget), their size, and
// every how many cells a token label fits.
struct GridFit {
    bool labels = false;
    int left = margin, top = margin, budget = 0, cell = 1, label_stride = 1;
};

// Label space decides the pixel budget, the budget decides pooling and cell size. Labels get an
// index prefix when they are thinned out or pooled; that widens them, so settle it in at most
// two passes (rows_maker and cols_maker keep the prefix choice). Labels that would leave the
// grid under 48 px are dropped.
GridFit fit_grid(const CellWindow& area, const HeatmapStyle& style, const TextLines& lines, int colorbar_area,
                 LabelMaker& rows_maker, LabelMaker& cols_maker) {
    const bool same_labels =
        area.q0 == area.k0 && area.q1 == area.k1 && rows_maker.tokens == cols_maker.tokens;  // self-attention
    GridFit fit;
    fit.labels = style.labels;
    for (int pass = 0; pass < 4; ++pass) {
        fit.left = margin;
        fit.top = margin + lines.title_band;
        if (fit.labels) {
            const int row_labels_px = rows_maker.widest();
            fit.left += lines.axis + 4 + row_labels_px + label_gap;
            fit.top += lines.axis + 4 + (same_labels ? row_labels_px : cols_maker.widest()) + label_gap;
        }
        fit.budget = std::min(style.max_px - fit.left - colorbar_area - margin, style.max_px - fit.top - margin);
        if (fit.budget < 48 && fit.labels) {
            fit.labels = false;
            continue;
        }
        fit.budget = std::max(fit.budget, 16);
        const int64_t rows = pooled_count(area.q1 - area.q0, fit.budget);
        const int64_t cols = pooled_count(area.k1 - area.k0, fit.budget);
        fit.cell = std::clamp<int>(fit.budget / static_cast<int>(std::max(rows, cols)), 1, max_cell_px);
        fit.label_stride = ceil_div(lines.label + 1, fit.cell);
        const bool pooled = rows < area.q1 - area.q0 || cols < area.k1 - area.k0;
        const bool want_index = fit.labels && (fit.label_stride > 1 || pooled);
        if (want_index == rows_maker.with_index) break;
        rows_maker.with_index = cols_maker.with_index = want_index;
    }
    return fit;
}

// Token labels left of and above the grid (every stride-th cell, centred on it), and the axis names.
void place_token_labels(HeatmapLayout& layout, const LabelMaker& rows_maker, const LabelMaker& cols_maker, int stride,
                        const TextLines& lines, const HeatmapStyle& style, const Font& font) {
    const int left = layout.grid_x, top = layout.grid_y, cell = layout.cell_w;
    for (int64_t r = 0; r < layout.cells.rows; r += stride) {
        TextPlacement p{
            rows_maker.text(layout.cells.row_edges[static_cast<size_t>(r)]), 0, 0, 0, lines.label, label_px};
        p.width = font.text_width(p.text, label_px);
        p.x = left - label_gap - p.width;
        p.y = top + static_cast<int>(r) * cell + cell / 2 - lines.label / 2;
        layout.row_labels.push_back(p);
    }
    for (int64_t c = 0; c < layout.cells.cols; c += stride) {
        TextPlacement p{cols_maker.text(layout.cells.col_edges[static_cast<size_t>(c)]),
                        0,
                        0,
                        lines.label,
                        0,
                        label_px,
                        TextDirection::upward};
        p.height = font.text_width(p.text, label_px);
        p.x = left + static_cast<int>(c) * cell + cell / 2 - lines.label / 2;
        p.y = top - label_gap - p.height;
        layout.column_labels.push_back(p);
    }
    TextPlacement row_name{
        style.row_axis_label, margin, 0, lines.axis, font.text_width(style.row_axis_label, axis_px), axis_px,
        TextDirection::upward};
    row_name.y = std::max(top, top + layout.grid_height() / 2 - row_name.height / 2);
    TextPlacement col_name{style.column_axis_label,
                           0,
                           margin + lines.title_band,
                           font.text_width(style.column_axis_label, axis_px),
                           lines.axis,
                           axis_px};
    col_name.x = std::max(left, left + layout.grid_width() / 2 - col_name.width / 2);
    layout.other_text.push_back(row_name);
    layout.other_text.push_back(col_name);
}

// The colorbar beside the grid, its ticks and their numbers. Returns its label (rotated, right of
// the numbers), already added to the layout's text.
TextPlacement place_colorbar(HeatmapLayout& layout, const ColorbarScale& bar, const TextLines& lines,
                             const HeatmapStyle& style, const Font& font) {
    layout.colorbar_x = layout.grid_x + layout.grid_width() + colorbar_gap;
    layout.colorbar_y = layout.grid_y;
    layout.colorbar_w = colorbar_width;
    layout.colorbar_h =
        std::max(layout.grid_height(), std::min(min_colorbar_height, style.max_px - layout.grid_y - margin));
    const int tick_text_x = layout.colorbar_x + colorbar_width + tick_length + 4;
    for (size_t k = 0; k < bar.ticks.size(); ++k) {
        const double v = bar.ticks[k];
        const int y =
            layout.colorbar_y +
            static_cast<int>(std::lround((1.0 - bar.scale.position(static_cast<float>(v))) * (layout.colorbar_h - 1)));
        layout.ticks.push_back({v, y});
        const std::string& text = bar.tick_texts[k];
        layout.other_text.push_back(
            {text, tick_text_x, y - lines.tick / 2, font.text_width(text, tick_px), lines.tick, tick_px});
    }
    const std::string bar_label = fit_text(font, style.colorbar_label + (style.log_scale ? " (log scale)" : ""),
                                           axis_px, std::max(layout.colorbar_h, 40));
    TextPlacement bar_name{bar_label,
                           tick_text_x + bar.tick_text_width + 8,
                           0,
                           lines.axis,
                           font.text_width(bar_label, axis_px),
                           axis_px,
                           TextDirection::upward};
    bar_name.y = layout.colorbar_y + std::max(0, layout.colorbar_h / 2 - bar_name.height / 2);
    layout.other_text.push_back(bar_name);
    return bar_name;
}

// The picture's size (everything placed, inside the margin), and the title fitted into it: the
// style's title, shortened if need be so that `note` (e.g. the pooling) after it always shows.
void size_picture(HeatmapLayout& layout, const TextPlacement& bar_name, const TextLines& lines, const std::string& note,
                  const HeatmapStyle& style, const Font& font) {
    layout.width = bar_name.x + lines.axis + margin;
    layout.height = std::max({layout.grid_y + layout.grid_height(), layout.colorbar_y + layout.colorbar_h,
                              bar_name.y + bar_name.height}) +
                    margin;
    if (!style.title.empty()) {
        const std::string suffix = note.empty() ? "" : fmt::format(" ({})", note);
        layout.width = std::min(
            style.max_px,
            std::max(layout.width, font.text_width(fmt::format("{}{}", style.title, suffix), title_px) + 2 * margin));
        layout.title.text = fmt::format(
            "{}{}",
            fit_text(font, style.title, title_px, layout.width - 2 * margin - font.text_width(suffix, title_px)),
            suffix);
        layout.title = {layout.title.text,          margin,  margin, font.text_width(layout.title.text, title_px),
                        font.line_height(title_px), title_px};
    }
}

}  // namespace

HeatmapLayout layout_heatmap(const float* weights, const Visibility& visibility,
                             const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                             const HeatmapStyle& style) {
    // Step 1: check what we were given; the rectangle to show.
    const CellWindow area = checked_area(visibility, query_tokens, key_tokens, style);

    // Step 2: fixed parts: title, colorbar with its tick numbers.
    const Font& font = Font::default_font();
    const TextLines lines = text_lines(font, style.title);
    const ColorbarScale bar = colorbar_scale(font, style, lines);

    // Step 3: label space, pixel budget, pooling and cell size.
    LabelMaker rows_maker{font, query_tokens, area.q0, area.q1, style.raw_labels};
    LabelMaker cols_maker{font, key_tokens, area.k0, area.k1, style.raw_labels};
    const GridFit fit = fit_grid(area, style, lines, bar.area_width, rows_maker, cols_maker);

    // Step 4: the cells.
    HeatmapLayout layout;
    layout.cells = build_cell_grid(weights, visibility, area, fit.budget, fit.budget, style.pool);
    layout.cell_w = layout.cell_h = fit.cell;
    layout.grid_x = fit.left;
    layout.grid_y = fit.top;

    // Step 5: token labels and axis names.
    if (fit.labels) place_token_labels(layout, rows_maker, cols_maker, fit.label_stride, lines, style, font);

    // Step 6: colorbar beside the grid, ticks and their numbers, its label rotated.
    const TextPlacement bar_name = place_colorbar(layout, bar, lines, style, font);

    // Step 7: picture size, and the title fitted into it; a pooled map's title says so.
    size_picture(layout, bar_name, lines, layout.cells.pooled() ? pooling_note(layout.cells, style.pool) : "", style,
                 font);
    return layout;
}

}  // namespace attn_viz
