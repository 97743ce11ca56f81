// An RGB8 raster canvas and the few drawing primitives the pictures need.
#pragma once

#include <cstdint>
#include <vector>

#include "colormap.hpp"

namespace attn_viz {

struct RasterImage {
    int width = 0;
    int height = 0;
    std::vector<uint8_t> rgb;  // [height, width, 3], row-major

    RasterImage() = default;
    RasterImage(int width_, int height_, Rgb fill = background_color);

    Rgb pixel(int x, int y) const;
    void set_pixel(int x, int y, Rgb color);  // ignores points outside the canvas
    // Fills [x, x + w) x [y, y + h), clipped to the canvas.
    void fill_rect(int x, int y, int w, int h, Rgb color);
    // One-pixel outline of the same rectangle.
    void stroke_rect(int x, int y, int w, int h, Rgb color);
    // Masked-cell pattern: mask_color with mask_hatch_color diagonals every 6 px (solid when small).
    void fill_mask_hatch(int x, int y, int w, int h);
    // Mixes color into a pixel with coverage alpha in [0, 255].
    void blend_pixel(int x, int y, Rgb color, int alpha);
    // Copies another image in at (x, y), clipped.
    void paste(const RasterImage& source, int x, int y);
};

}  // namespace attn_viz
