// Rasterises a heatmap layout (see heatmap.hpp).
#include "heatmap.hpp"

#include <vector>

#include "png_writer.hpp"

namespace attn_viz {

namespace {

constexpr Rgb frame_color{110, 110, 110};

void draw_cells(RasterImage& image, const HeatmapLayout& layout, const Colormap& colormap, const ValueScale& scale) {
    // Step 1: each cell row in one go, masked cells plain mask gray.
    const CellGrid& cells = layout.cells;
    LevelPalette levels(image, colormap);
    const uint16_t mask_index = image.color_index(mask_color);
    std::vector<uint16_t> row_indices(static_cast<size_t>(cells.cols));
    for (int64_t r = 0; r < cells.rows; ++r) {
        for (int64_t c = 0; c < cells.cols; ++c)
            row_indices[static_cast<size_t>(c)] =
                cells.is_masked(r, c) ? mask_index : levels.at(scale.position(cells.value(r, c)));
        image.fill_cell_row(layout.grid_x, layout.grid_y + static_cast<int>(r) * layout.cell_h, layout.cell_w,
                            layout.cell_h, row_indices.data(), static_cast<int>(cells.cols));
    }
    // Step 2: the hatch over masked cells (it needs cells of at least 6 px; a no-op below that).
    if (layout.cell_w >= 6 && layout.cell_h >= 6)
        for (int64_t r = 0; r < cells.rows; ++r)
            for (int64_t c = 0; c < cells.cols; ++c)
                if (cells.is_masked(r, c))
                    image.fill_mask_hatch(layout.grid_x + static_cast<int>(c) * layout.cell_w,
                                          layout.grid_y + static_cast<int>(r) * layout.cell_h, layout.cell_w,
                                          layout.cell_h);
    image.stroke_rect(layout.grid_x - 1, layout.grid_y - 1, layout.grid_width() + 2, layout.grid_height() + 2,
                      frame_color);
}

// A white line along every cell edge where a group of group_size rows or columns ends (the
// layers of a head-by-head matrix); 2 px once cells are 12 px, 1 px below.
void draw_group_lines(RasterImage& image, const HeatmapLayout& layout, int64_t group_size) {
    if (group_size <= 0) return;
    const CellGrid& cells = layout.cells;
    const int width = layout.cell_w >= 12 ? 2 : 1;
    for (int64_t c = 1; c < cells.cols; ++c)
        if (cells.col_edges[static_cast<size_t>(c)] % group_size == 0)
            image.fill_rect(layout.grid_x + static_cast<int>(c) * layout.cell_w - width / 2, layout.grid_y, width,
                            layout.grid_height(), background_color);
    for (int64_t r = 1; r < cells.rows; ++r)
        if (cells.row_edges[static_cast<size_t>(r)] % group_size == 0)
            image.fill_rect(layout.grid_x, layout.grid_y + static_cast<int>(r) * layout.cell_h - width / 2,
                            layout.grid_width(), width, background_color);
}

void draw_colorbar(RasterImage& image, const HeatmapLayout& layout, const Colormap& colormap) {
    // Top row is the top of the scale; each row takes the entry for its height.
    for (int y = 0; y < layout.colorbar_h; ++y) {
        const double position = layout.colorbar_h > 1 ? 1.0 - static_cast<double>(y) / (layout.colorbar_h - 1) : 1.0;
        image.fill_rect(layout.colorbar_x, layout.colorbar_y + y, layout.colorbar_w, 1, colormap.raster_at(position));
    }
    image.stroke_rect(layout.colorbar_x - 1, layout.colorbar_y - 1, layout.colorbar_w + 2, layout.colorbar_h + 2,
                      frame_color);
    for (const ColorbarTick& tick : layout.ticks)
        image.fill_rect(layout.colorbar_x + layout.colorbar_w, tick.y, 4, 1, text_color);
}

}  // namespace

RasterImage render_heatmap(const HeatmapLayout& layout, const HeatmapStyle& style) {
    RasterImage image(layout.width, layout.height);
    const Colormap colormap = Colormap::named(style.colormap);
    draw_cells(image, layout, colormap, ValueScale{style.vmin, style.vmax, style.log_scale});
    draw_group_lines(image, layout, style.group_size);
    draw_colorbar(image, layout, colormap);
    if (!layout.title.text.empty()) draw_placed_text(image, layout.title);
    for (const auto* group : {&layout.row_labels, &layout.column_labels, &layout.other_text})
        for (const TextPlacement& text : *group) draw_placed_text(image, text);
    return image;
}

HeatmapLayout write_head_png(const std::string& path, const float* weights, const Visibility& visibility,
                             const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                             const HeatmapStyle& style) {
    HeatmapLayout layout = layout_heatmap(weights, visibility, query_tokens, key_tokens, style);
    write_png(path, render_heatmap(layout, style));
    return layout;
}

}  // namespace attn_viz
