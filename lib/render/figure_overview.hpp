// The overview sheet: every head of every layer as a small labelled tile in one PNG, like
// BertViz's model view (rows = layers, columns = heads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "color_range.hpp"
#include "heatmap_layout.hpp"
#include "raster_image.hpp"
#include "tensor.hpp"

namespace attn_viz {

struct OverviewLayout {
    int width = 0, height = 0;
    int tile_px = 0;                  // longer side of one tile's cell area
    int cell_px = 1;                  // pixels per (pooled) cell, cells are square
    std::vector<int> tile_x, tile_y;  // [L * H] top-left of tile (layer l, head h) at l * H + h
    std::vector<TextPlacement> texts;
};

// layers: one [H, T, S] tensor per layer, all the same shape; layer_numbers names the rows
// ("L<n>"; empty = 0, 1, ...). Tiles are pooled with style.pool; colors use style.colormap and
// style.log_scale, with [style.vmin, style.vmax] for every tile (ScaleMode::global: the colorbar
// is numbered) or each tile's own range through map_color_range (ScaleMode::head).
// style.max_px bounds the sheet when tiles can stay at least 8 px. tile_labels: [L * H] words
// under each tile's "L0 H3" caption (e.g. its head label), or empty.
// Tiles are pooled on up to `threads` threads.
RasterImage render_overview(const std::vector<const Tensor*>& layers, const std::vector<int64_t>& layer_numbers,
                            const Visibility& visibility, const HeatmapStyle& style, const ColorRangeRule& colors,
                            OverviewLayout* layout_out = nullptr, int threads = 1,
                            const std::vector<std::string>& tile_labels = {});

OverviewLayout write_overview_png(const std::string& path, const std::vector<const Tensor*>& layers,
                                  const std::vector<int64_t>& layer_numbers, const Visibility& visibility,
                                  const HeatmapStyle& style, const ColorRangeRule& colors, int threads = 1,
                                  const std::vector<std::string>& tile_labels = {});

}  // namespace attn_viz
