// The overview sheet: every head of every layer as a small labelled tile in one PNG, like
// BertViz's model view (rows = layers, columns = heads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "color_range.hpp"
#include "heatmap_grid.hpp"
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

// The sheet from tiles pooled ahead, layer by layer (a streamed run keeps these small tiles instead
// of the maps): the same picture render_overview draws from the maps.
struct OverviewTiles {
    int64_t num_heads = 0;            // per layer
    int budget = 0;                   // cells per tile side at most (overview_tile_budget)
    std::vector<CellGrid> cells;      // [L * H] each head's pooled cells, layer by layer
    std::vector<ValueRange> visible;  // [L * H] each head's visible extremes (for ScaleMode::head)
};

// An empty OverviewTiles for a sheet of n_layers x n_heads tiles drawn with `style` (its max_px,
// title; with_labels: tile labels will be given).
OverviewTiles overview_tiles(const std::vector<int64_t>& layer_numbers, int n_layers, int n_heads,
                             const HeatmapStyle& style, bool with_labels);
// layer: [H, T, S] one layer's maps -> its tiles appended (pooled with style.pool, on `threads`).
void add_overview_layer(OverviewTiles& tiles, const Tensor& layer, const Visibility& visibility,
                        const HeatmapStyle& style, int threads = 1);
// The sheet of every layer's tiles; style, colors, layer_numbers and tile_labels as render_overview.
RasterImage render_overview_tiles(const OverviewTiles& tiles, const std::vector<int64_t>& layer_numbers,
                                  const HeatmapStyle& style, const ColorRangeRule& colors,
                                  OverviewLayout* layout_out = nullptr,
                                  const std::vector<std::string>& tile_labels = {});

OverviewLayout write_overview_png(const std::string& path, const std::vector<const Tensor*>& layers,
                                  const std::vector<int64_t>& layer_numbers, const Visibility& visibility,
                                  const HeatmapStyle& style, const ColorRangeRule& colors, int threads = 1,
                                  const std::vector<std::string>& tile_labels = {});

}  // namespace attn_viz
