// Overview sheet of all heads (see figure_overview.hpp).
#include "figure_overview.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "figure_style.hpp"
#include "parallel_for.hpp"
#include "png_writer.hpp"

namespace attn_viz {

namespace {

using namespace figure_style;
constexpr int tile_gap = 10;
constexpr int caption_min_tile = 56;  // tiles at least this big get an "L0 H3" caption
constexpr float header_px = axis_px;
constexpr float caption_px = tick_px;

// "L3", "H7".
std::string tagged(char tag, int64_t number) { return fmt::format("{}{}", tag, number); }

void check_layers(const std::vector<const Tensor*>& layers, const Visibility& visibility) {
    if (layers.empty()) throw Error(ErrorKind::internal, "overview: no layers");
    for (size_t l = 0; l < layers.size(); ++l) {
        const Tensor& t = *layers[l];
        if (t.rank() != 3 || t.dim(0) != layers[0]->dim(0) || t.dim(1) != visibility.queries ||
            t.dim(2) != visibility.keys)
            throw Error(ErrorKind::internal, fmt::format("overview: layer {} attention is {}, expected [H, {}, {}]", l,
                                                         shape_string(t.shape), visibility.queries, visibility.keys));
    }
}

// Colorbar to the right of the tiles: the shared range with numbered ticks (axis_ticks, as the
// heatmaps), or "min"/"max" when each tile has its own range.
void draw_overview_colorbar(RasterImage& image, int x, int y, int h, const HeatmapStyle& style, ScaleMode scale,
                            const Colormap& colormap, const Font& font) {
    for (int row = 0; row < h; ++row)
        image.fill_rect(x, y + row, 14, 1, colormap.raster_at(1.0 - static_cast<double>(row) / std::max(h - 1, 1)));
    image.stroke_rect(x - 1, y - 1, 16, h + 2, Rgb{110, 110, 110});
    const int line = font.line_height(caption_px);
    const auto label = [&](const std::string& text, int at_y) {
        draw_placed_text(image, {text, x + 22, at_y - line / 2, font.text_width(text, caption_px), line, caption_px});
    };
    std::string note = "per-head scale";
    if (scale == ScaleMode::global) {
        const ValueScale value_scale{style.vmin, style.vmax, style.log_scale};
        for (double v : axis_ticks(value_scale)) {
            const int at_y =
                y + static_cast<int>(std::lround((1.0 - value_scale.position(static_cast<float>(v))) * (h - 1)));
            image.fill_rect(x + 15, at_y, 4, 1, text_color);
            label(format_tick(v), at_y);
        }
        note = style.colorbar_label + (style.log_scale ? " (log scale)" : "");
    } else {
        label("max", y);
        label("min", y + h);
    }
    draw_placed_text(image, {note, x + 22 + font.text_width("0.0000", caption_px) + 4,
                             y + h / 2 - font.text_width(note, caption_px) / 2, line, font.text_width(note, caption_px),
                             caption_px, TextDirection::upward});
}

// "L<n>": the name of layer row l, from layer_numbers when given.
std::string layer_name(const std::vector<int64_t>& layer_numbers, int l) {
    return tagged('L', layer_numbers.empty() ? l : layer_numbers[static_cast<size_t>(l)]);
}

// Where the tiles start and how many cells a tile may have per side, so that the sheet fits
// style.max_px.
struct SheetFrame {
    int header_line = 0, caption_line = 0;
    int left = 0, top = 0;  // top-left of the first row of tiles (with their captions)
    int colorbar_area = 0;  // width right of the tiles
    int budget = 0;         // cells per tile side at most
    bool captions = false;  // tiles big enough for an "L0 H3" caption
    int caption_lines = 1;  // 2 with tile labels: "L0 H3" above the label
    int caption_h = 0;      // the captions' height (0 without them)
};

SheetFrame sheet_frame(const Font& font, const std::vector<int64_t>& layer_numbers, int n_layers, int n_heads,
                       const HeatmapStyle& style, bool tile_labels) {
    SheetFrame frame;
    frame.header_line = font.line_height(header_px);
    frame.caption_line = font.line_height(caption_px);
    int row_header_w = 0;
    for (int l = 0; l < n_layers; ++l)
        row_header_w = std::max(row_header_w, font.text_width(layer_name(layer_numbers, l), header_px));
    const int title_h = style.title.empty() ? 0 : font.line_height(title_px) + 10;
    frame.left = margin + row_header_w + 10;
    frame.top = margin + title_h + frame.header_line + 6;
    frame.colorbar_area = 24 + 22 + font.text_width("0.0000", caption_px) + 4 + frame.caption_line + 8;
    frame.caption_lines = tile_labels ? 2 : 1;
    const int fit_w = (style.max_px - frame.left - frame.colorbar_area - margin) / n_heads - tile_gap;
    const int fit_h =
        (style.max_px - frame.top - margin) / n_layers - tile_gap - frame.caption_lines * frame.caption_line - 2;
    frame.budget = std::clamp(std::min(fit_w, fit_h), 8, 160);
    frame.captions = frame.budget >= caption_min_tile;
    frame.caption_h = frame.captions ? frame.caption_lines * frame.caption_line + 2 : 0;
    return frame;
}

}  // namespace

OverviewTiles overview_tiles(const std::vector<int64_t>& layer_numbers, int n_layers, int n_heads,
                             const HeatmapStyle& style, bool with_labels) {
    OverviewTiles tiles;
    tiles.num_heads = n_heads;
    tiles.budget = sheet_frame(Font::default_font(), layer_numbers, n_layers, n_heads, style, with_labels).budget;
    return tiles;
}

void add_overview_layer(OverviewTiles& tiles, const Tensor& layer, const Visibility& visibility,
                        const HeatmapStyle& style, int threads) {
    check_layers({&layer}, visibility);
    if (layer.dim(0) != tiles.num_heads)
        throw Error(ErrorKind::internal,
                    fmt::format("overview: a layer of {} heads, expected {}", layer.dim(0), tiles.num_heads));
    const int64_t first = static_cast<int64_t>(tiles.cells.size()), per_head = layer.dim(1) * layer.dim(2);
    tiles.cells.resize(static_cast<size_t>(first + tiles.num_heads));
    tiles.visible.resize(tiles.cells.size());
    parallel_for(
        tiles.num_heads, threads,
        [&](int64_t h) {
            const float* weights = layer.ptr() + h * per_head;
            tiles.visible[static_cast<size_t>(first + h)] = visible_value_range(weights, visibility);
            tiles.cells[static_cast<size_t>(first + h)] =
                build_cell_grid(weights, visibility, std::nullopt, tiles.budget, tiles.budget, style.pool);
        },
        per_head);
}

namespace {

// Each tile's color range: the shared one, or its own (ScaleMode::head, map_color_range).
std::vector<ValueScale> tile_scales(const OverviewTiles& tiles, const HeatmapStyle& style,
                                    const ColorRangeRule& colors) {
    std::vector<ValueScale> scales(tiles.cells.size(), ValueScale{style.vmin, style.vmax, style.log_scale});
    if (colors.scale == ScaleMode::head)
        for (size_t n = 0; n < scales.size(); ++n) {
            const ValueRange range = map_color_range(colors, tiles.visible[n], ValueRange{style.vmin, style.vmax});
            scales[n].vmin = range.vmin, scales[n].vmax = range.vmax;
        }
    return scales;
}

// One tile's size (all tiles pool alike) and the steps from one tile to the next, room for the
// widest caption or header included.
struct TilePitch {
    int cell = 1, tile_w = 0, tile_h = 0;
    int x = 0, y = 0;
};

TilePitch tile_pitch(const CellGrid& cells, const SheetFrame& frame, int n_layers, int n_heads, const Font& font) {
    TilePitch pitch;
    pitch.cell = std::max<int>(1, frame.budget / static_cast<int>(std::max(cells.rows, cells.cols)));
    pitch.tile_w = static_cast<int>(cells.cols) * pitch.cell;
    pitch.tile_h = static_cast<int>(cells.rows) * pitch.cell;
    const std::string widest_caption = fmt::format("{} {}", tagged('L', n_layers), tagged('H', n_heads));
    const int label_w =
        frame.captions ? font.text_width(widest_caption, caption_px) : font.text_width(tagged('H', n_heads), header_px);
    pitch.x = std::max(pitch.tile_w, label_w) + tile_gap;
    pitch.y = pitch.tile_h + frame.caption_h + tile_gap;
    return pitch;
}

// The title, "H<h>" above each column, then row by row "L<l>" left of the row and each tile's
// place and caption (with its label from tile_labels, [L * H] or empty, on a second line).
void place_tiles_and_texts(OverviewLayout& layout, const SheetFrame& frame, const TilePitch& pitch,
                           const std::vector<int64_t>& layer_numbers, int n_layers, int n_heads,
                           const HeatmapStyle& style, const Font& font, const std::vector<std::string>& tile_labels) {
    if (!style.title.empty())
        layout.texts.push_back({style.title, margin, margin, font.text_width(style.title, title_px),
                                font.line_height(title_px), title_px});
    for (int h = 0; h < n_heads; ++h) {
        const std::string text = tagged('H', h);
        const int w = font.text_width(text, header_px);
        layout.texts.push_back({text, frame.left + h * pitch.x + pitch.tile_w / 2 - w / 2,
                                frame.top - frame.header_line - 4, w, frame.header_line, header_px});
    }
    for (int l = 0; l < n_layers; ++l) {
        const int y_row = frame.top + l * pitch.y;
        const std::string name = layer_name(layer_numbers, l);
        layout.texts.push_back({name, margin, y_row + frame.caption_h + pitch.tile_h / 2 - frame.header_line / 2,
                                font.text_width(name, header_px), frame.header_line, header_px});
        for (int h = 0; h < n_heads; ++h) {
            const int x = frame.left + h * pitch.x, y = y_row + frame.caption_h;
            layout.tile_x.push_back(x);
            layout.tile_y.push_back(y);
            if (frame.captions) {
                const std::string caption = fmt::format("{} {}", name, tagged('H', h));
                layout.texts.push_back(
                    {caption, x, y_row, font.text_width(caption, caption_px), frame.caption_line, caption_px});
                if (tile_labels.empty()) continue;
                const std::string label =
                    fit_text(font, tile_labels[static_cast<size_t>(l * n_heads + h)], caption_px, pitch.x - tile_gap);
                layout.texts.push_back({label, x, y_row + frame.caption_line, font.text_width(label, caption_px),
                                        frame.caption_line, caption_px});
            }
        }
    }
}

// Every tile at its place: cell rows (masked cells plain mask gray) in a gray frame.
void draw_tiles(RasterImage& image, const OverviewTiles& tiles, const std::vector<ValueScale>& scales,
                const OverviewLayout& layout, const TilePitch& pitch, const Colormap& colormap) {
    LevelPalette levels(image, colormap);
    const uint16_t mask_index = image.color_index(mask_color);
    std::vector<uint16_t> row_indices(static_cast<size_t>(tiles.cells.front().cols));
    for (size_t n = 0; n < tiles.cells.size(); ++n) {
        const CellGrid& cells = tiles.cells[n];
        const ValueScale& value_scale = scales[n];
        const int x = layout.tile_x[n], y = layout.tile_y[n];
        for (int64_t r = 0; r < cells.rows; ++r) {
            for (int64_t c = 0; c < cells.cols; ++c)
                row_indices[static_cast<size_t>(c)] =
                    cells.is_masked(r, c) ? mask_index : levels.at(value_scale.position(cells.value(r, c)));
            image.fill_cell_row(x, y + static_cast<int>(r) * pitch.cell, pitch.cell, pitch.cell, row_indices.data(),
                                static_cast<int>(cells.cols));
        }
        image.stroke_rect(x - 1, y - 1, pitch.tile_w + 2, pitch.tile_h + 2, Rgb{160, 160, 160});
    }
}

}  // namespace

RasterImage render_overview(const std::vector<const Tensor*>& layers, const std::vector<int64_t>& layer_numbers,
                            const Visibility& visibility, const HeatmapStyle& style, const ColorRangeRule& colors,
                            OverviewLayout* layout_out, int threads, const std::vector<std::string>& tile_labels) {
    check_layers(layers, visibility);
    OverviewTiles tiles = overview_tiles(layer_numbers, static_cast<int>(layers.size()),
                                         static_cast<int>(layers[0]->dim(0)), style, !tile_labels.empty());
    for (const Tensor* layer : layers) add_overview_layer(tiles, *layer, visibility, style, threads);
    return render_overview_tiles(tiles, layer_numbers, style, colors, layout_out, tile_labels);
}

RasterImage render_overview_tiles(const OverviewTiles& tiles, const std::vector<int64_t>& layer_numbers,
                                  const HeatmapStyle& style, const ColorRangeRule& colors, OverviewLayout* layout_out,
                                  const std::vector<std::string>& tile_labels) {
    // Step 1: sizes. Tiles share one size chosen so the sheet fits style.max_px.
    if (tiles.cells.empty() || tiles.num_heads <= 0) throw Error(ErrorKind::internal, "overview: no layers");
    const Colormap colormap = Colormap::named(style.colormap);
    const Font& font = Font::default_font();
    const int n_heads = static_cast<int>(tiles.num_heads), n_layers = static_cast<int>(tiles.cells.size()) / n_heads;
    if (!tile_labels.empty() && static_cast<int64_t>(tile_labels.size()) != int64_t{n_layers} * n_heads)
        throw Error(ErrorKind::internal, fmt::format("overview: {} tile labels for {} heads", tile_labels.size(),
                                                     int64_t{n_layers} * n_heads));
    const SheetFrame frame = sheet_frame(font, layer_numbers, n_layers, n_heads, style, !tile_labels.empty());
    if (frame.budget != tiles.budget) throw Error(ErrorKind::internal, "overview: tiles pooled for another sheet");

    // Step 2: the tiles' color ranges; from the cells the tiles' size and the sheet's.
    const std::vector<ValueScale> scales = tile_scales(tiles, style, colors);
    const TilePitch pitch = tile_pitch(tiles.cells.front(), frame, n_layers, n_heads, font);
    OverviewLayout layout;
    layout.tile_px = std::max(pitch.tile_w, pitch.tile_h);
    layout.cell_px = pitch.cell;
    const int grid_right = frame.left + n_heads * pitch.x;
    layout.width =
        std::max(grid_right + frame.colorbar_area + margin, font.text_width(style.title, title_px) + 2 * margin);
    layout.height = std::max(frame.top + n_layers * pitch.y, frame.top + 160) + margin;

    // Step 3: title, headers, captions and where each tile goes.
    place_tiles_and_texts(layout, frame, pitch, layer_numbers, n_layers, n_heads, style, font, tile_labels);

    // Step 4: tiles, then the text over them, then the colorbar.
    RasterImage image(layout.width, layout.height);
    draw_tiles(image, tiles, scales, layout, pitch, colormap);
    for (const TextPlacement& text : layout.texts) draw_placed_text(image, text);
    draw_overview_colorbar(image, grid_right + 24, frame.top,
                           std::max(160, std::min(n_layers * pitch.y - tile_gap, 320)), style, colors.scale, colormap,
                           font);
    if (layout_out) *layout_out = layout;
    return image;
}

OverviewLayout write_overview_png(const std::string& path, const std::vector<const Tensor*>& layers,
                                  const std::vector<int64_t>& layer_numbers, const Visibility& visibility,
                                  const HeatmapStyle& style, const ColorRangeRule& colors, int threads,
                                  const std::vector<std::string>& tile_labels) {
    OverviewLayout layout;
    write_png(path, render_overview(layers, layer_numbers, visibility, style, colors, &layout, threads, tile_labels));
    return layout;
}

}  // namespace attn_viz
