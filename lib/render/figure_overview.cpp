// Overview sheet of all heads (see figure_overview.hpp).
#include "figure_overview.hpp"

#include <algorithm>

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

// "L3", "H7" (built without const char* + string&&, which trips GCC 12's -Wrestrict).
std::string tagged(char tag, int64_t number) {
    std::string text(1, tag);
    text += std::to_string(number);
    return text;
}

void check_layers(const std::vector<const Tensor*>& layers, const Visibility& visibility) {
    if (layers.empty()) throw Error(ErrorKind::internal, "overview: no layers");
    for (size_t l = 0; l < layers.size(); ++l) {
        const Tensor& t = *layers[l];
        if (t.rank() != 3 || t.dim(0) != layers[0]->dim(0) || t.dim(1) != visibility.queries || t.dim(2) != visibility.keys)
            throw Error(ErrorKind::internal, "overview: layer " + std::to_string(l) + " attention is " + shape_string(t.shape) +
                                                 ", expected [H, " + std::to_string(visibility.queries) + ", " +
                                                 std::to_string(visibility.keys) + "]");
    }
}

// Colorbar to the right of the tiles: the shared range, or "min"/"max" when each tile has its own.
void draw_overview_colorbar(RasterImage& image, int x, int y, int h, const HeatmapStyle& style, ScaleMode scale,
                            const Colormap& colormap, const Font& font) {
    for (int row = 0; row < h; ++row)
        image.fill_rect(x, y + row, 14, 1, colormap.raster_at(1.0 - static_cast<double>(row) / std::max(h - 1, 1)));
    image.stroke_rect(x - 1, y - 1, 16, h + 2, Rgb{110, 110, 110});
    const int line = font.line_height(caption_px);
    const std::string top = scale == ScaleMode::global ? format_tick(style.vmax) : "max";
    const std::string bottom = scale == ScaleMode::global ? format_tick(style.vmin) : "min";
    draw_placed_text(image, {top, x + 20, y - line / 2, font.text_width(top, caption_px), line, caption_px});
    draw_placed_text(image, {bottom, x + 20, y + h - line / 2, font.text_width(bottom, caption_px), line, caption_px});
    if (scale == ScaleMode::head) {
        const std::string note = "per-head scale";
        draw_placed_text(image, {note, x + 20 + 2 * line, y + h / 2 - font.text_width(note, caption_px) / 2, line,
                                 font.text_width(note, caption_px), caption_px, TextDirection::upward});
    }
}

}  // namespace

RasterImage render_overview(const std::vector<const Tensor*>& layers, const std::vector<int64_t>& layer_numbers,
                            const Visibility& visibility, const HeatmapStyle& style, ScaleMode scale,
                            OverviewLayout* layout_out, int threads) {
    // Step 1: sizes. Tiles share one size chosen so the sheet fits style.max_px.
    check_layers(layers, visibility);
    const Colormap colormap = Colormap::named(style.colormap);
    const Font& font = Font::default_font();
    const int n_layers = static_cast<int>(layers.size()), n_heads = static_cast<int>(layers[0]->dim(0));
    auto layer_name = [&](int l) {
        return tagged('L', layer_numbers.empty() ? l : layer_numbers[static_cast<size_t>(l)]);
    };
    const int header_line = font.line_height(header_px), caption_line = font.line_height(caption_px);
    int row_header_w = 0;
    for (int l = 0; l < n_layers; ++l) row_header_w = std::max(row_header_w, font.text_width(layer_name(l), header_px));
    const int title_h = style.title.empty() ? 0 : font.line_height(title_px) + 10;
    const int left = margin + row_header_w + 10, top = margin + title_h + header_line + 6;
    const int colorbar_area = 24 + 16 + 8 + font.text_width("0.0000", caption_px) + caption_line * 3;
    const int fit_w = (style.max_px - left - colorbar_area - margin) / n_heads - tile_gap;
    const int fit_h = (style.max_px - top - margin) / n_layers - tile_gap - caption_line - 2;
    const int budget = std::clamp(std::min(fit_w, fit_h), 8, 160);
    const bool captions = budget >= caption_min_tile;
    const int caption_h = captions ? caption_line + 2 : 0;

    // Step 2: the cells each tile shows (pooled the same way for every head) and its own or the
    // shared color range, tiles in parallel: each reads a whole [T, S] map. Drawing into the one
    // canvas stays on this thread.
    const int64_t per_head = layers[0]->dim(1) * layers[0]->dim(2);
    std::vector<CellGrid> tile_cells(static_cast<size_t>(n_layers * n_heads));
    std::vector<ValueScale> tile_scales(tile_cells.size(), ValueScale{style.vmin, style.vmax, style.log_scale});
    parallel_for(static_cast<int64_t>(tile_cells.size()), threads, [&](int64_t n) {
        const float* weights = layers[static_cast<size_t>(n / n_heads)]->ptr() + (n % n_heads) * per_head;
        if (scale == ScaleMode::head) {
            const ValueRange range = visible_value_range(weights, visibility);
            tile_scales[static_cast<size_t>(n)].vmin = range.vmin;
            tile_scales[static_cast<size_t>(n)].vmax = range.vmax;
        }
        tile_cells[static_cast<size_t>(n)] = build_cell_grid(weights, visibility, std::nullopt, budget, budget, style.pool);
    });
    const CellGrid& probe = tile_cells.front();
    const int cell = std::max<int>(1, budget / static_cast<int>(std::max(probe.rows, probe.cols)));
    const int tile_w = static_cast<int>(probe.cols) * cell, tile_h = static_cast<int>(probe.rows) * cell;
    const std::string widest_caption = tagged('L', n_layers) + ' ' + tagged('H', n_heads);
    const int label_w = captions ? font.text_width(widest_caption, caption_px)
                                 : font.text_width(tagged('H', n_heads), header_px);
    const int pitch_x = std::max(tile_w, label_w) + tile_gap;
    const int pitch_y = tile_h + caption_h + tile_gap;

    OverviewLayout layout;
    layout.tile_px = std::max(tile_w, tile_h);
    layout.cell_px = cell;
    const int grid_right = left + n_heads * pitch_x;
    layout.width = std::max(grid_right + colorbar_area + margin, font.text_width(style.title, title_px) + 2 * margin);
    layout.height = std::max(top + n_layers * pitch_y, top + 160) + margin;
    RasterImage image(layout.width, layout.height);

    // Step 3: headers and title.
    if (!style.title.empty())
        layout.texts.push_back({style.title, margin, margin, font.text_width(style.title, title_px), font.line_height(title_px), title_px});
    for (int h = 0; h < n_heads; ++h) {
        const std::string text = tagged('H', h);
        const int w = font.text_width(text, header_px);
        layout.texts.push_back({text, left + h * pitch_x + tile_w / 2 - w / 2, top - header_line - 4, w, header_line, header_px});
    }
    // Step 4: tiles, each with its caption.
    LevelPalette levels(image, colormap);
    const uint16_t mask_index = image.color_index(mask_color);
    std::vector<uint16_t> row_indices(static_cast<size_t>(probe.cols));
    for (int l = 0; l < n_layers; ++l) {
        const int y_row = top + l * pitch_y;
        const std::string name = layer_name(l);
        layout.texts.push_back({name, margin, y_row + caption_h + tile_h / 2 - header_line / 2, font.text_width(name, header_px),
                                header_line, header_px});
        for (int h = 0; h < n_heads; ++h) {
            const int x = left + h * pitch_x, y = y_row + caption_h;
            layout.tile_x.push_back(x);
            layout.tile_y.push_back(y);
            if (captions) {
                const std::string caption = name + ' ' + tagged('H', h);
                layout.texts.push_back({caption, x, y_row, font.text_width(caption, caption_px), caption_line, caption_px});
            }
            const CellGrid& cells = tile_cells[static_cast<size_t>(l * n_heads + h)];
            const ValueScale& value_scale = tile_scales[static_cast<size_t>(l * n_heads + h)];
            for (int64_t r = 0; r < cells.rows; ++r) {
                for (int64_t c = 0; c < cells.cols; ++c)
                    row_indices[static_cast<size_t>(c)] =
                        cells.is_masked(r, c) ? mask_index : levels.at(value_scale.position(cells.value(r, c)));
                image.fill_cell_row(x, y + static_cast<int>(r) * cell, cell, cell, row_indices.data(), static_cast<int>(cells.cols));
            }
            image.stroke_rect(x - 1, y - 1, tile_w + 2, tile_h + 2, Rgb{160, 160, 160});
        }
    }
    for (const TextPlacement& text : layout.texts) draw_placed_text(image, text);
    draw_overview_colorbar(image, grid_right + 24, top, std::max(160, std::min(n_layers * pitch_y - tile_gap, 320)), style, scale,
                           colormap, font);
    if (layout_out) *layout_out = layout;
    return image;
}

OverviewLayout write_overview_png(const std::string& path, const std::vector<const Tensor*>& layers,
                                  const std::vector<int64_t>& layer_numbers, const Visibility& visibility,
                                  const HeatmapStyle& style, ScaleMode scale, int threads) {
    OverviewLayout layout;
    write_png(path, render_overview(layers, layer_numbers, visibility, style, scale, &layout, threads));
    return layout;
}

}  // namespace attn_viz
