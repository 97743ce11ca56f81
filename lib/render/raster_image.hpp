// A palette-indexed raster canvas and the few drawing primitives the pictures need. Pixels hold
// indices into a palette of the distinct colors drawn so far: a heatmap resolves each color once
// and fills cells with 2-byte indices, and the PNG writer learns from the palette alone which form
// to write: gray when every color is a gray, else indexed up to 256 colors, else RGB.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "colormap.hpp"

namespace attn_viz {

struct RasterImage {
    int width = 0;
    int height = 0;
    std::vector<Rgb> palette;       // distinct colors in the order they were first drawn
    std::vector<uint16_t> indices;  // [height, width] palette index of each pixel, row-major

    RasterImage() = default;
    RasterImage(int width_, int height_, Rgb fill = background_color);

    Rgb pixel(int x, int y) const { return palette[indices[static_cast<size_t>(y) * width + x]]; }
    void set_pixel(int x, int y, Rgb color);  // ignores points outside the canvas
    // Fills [x, x + w) x [y, y + h), clipped to the canvas.
    void fill_rect(int x, int y, int w, int h, Rgb color);
    // One-pixel outline of the same rectangle.
    void stroke_rect(int x, int y, int w, int h, Rgb color);
    // Masked-cell pattern: mask_color with mask_hatch_color diagonals every 6 px (solid when small).
    void fill_mask_hatch(int x, int y, int w, int h);
    // Mixes color into a pixel with coverage alpha in [0, 255], rounded to 16 levels (0, 17, ...,
    // 255): text over one background color then adds at most 15 colors to the palette.
    void blend_pixel(int x, int y, Rgb color, int alpha);

    // The palette index of color, appended when new. Throws Error(internal) past 65535 colors.
    uint16_t color_index(Rgb color);
    // cell_indices: [n] palette indices. Draws a row of n cells, each w x h pixels, left to right
    // from (x, y), clipped: one pixel row is written, then copied down (heatmap cell rows).
    void fill_cell_row(int x, int y, int w, int h, const uint16_t* cell_indices, int n);

private:
    // fill_rect with a color already resolved by color_index().
    void fill_rect_index(int x, int y, int w, int h, uint16_t index);
    void rehash_colors();

    // Open-addressing hash from color to palette index + 1 (0 = empty slot), at most half full,
    // and the last color looked up (runs of one color skip the hash).
    std::vector<uint16_t> color_slots_;
    Rgb last_color_;
    uint16_t last_index_ = 0;
};

// Palette indices of a colormap's raster levels (Colormap::raster_at) in one image, each
// resolved on first use, so per-cell loops skip the color lookup.
class LevelPalette {
public:
    LevelPalette(RasterImage& image, const Colormap& colormap);
    // position in [0, 1] (clamped, NaN -> 0) -> palette index of colormap.raster_at(position).
    uint16_t at(double position) {
        int32_t& index = indices_[static_cast<size_t>(raster_level(position))];
        if (index < 0) index = image_.color_index(colormap_.raster_at(position));
        return static_cast<uint16_t>(index);
    }

private:
    RasterImage& image_;
    const Colormap& colormap_;
    std::array<int32_t, raster_levels> indices_;  // -1 = not resolved yet
};

}  // namespace attn_viz
