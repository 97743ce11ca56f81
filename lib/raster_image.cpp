// RGB8 canvas primitives (see raster_image.hpp).
#include "raster_image.hpp"

#include <algorithm>

namespace attn_viz {

RasterImage::RasterImage(int width_, int height_, Rgb fill)
    : width(width_), height(height_), rgb(static_cast<size_t>(width_) * height_ * 3) {
    for (size_t i = 0; i < rgb.size(); i += 3) {
        rgb[i] = fill.r;
        rgb[i + 1] = fill.g;
        rgb[i + 2] = fill.b;
    }
}

Rgb RasterImage::pixel(int x, int y) const {
    const size_t at = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[at], rgb[at + 1], rgb[at + 2]};
}

void RasterImage::set_pixel(int x, int y, Rgb color) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const size_t at = (static_cast<size_t>(y) * width + x) * 3;
    rgb[at] = color.r;
    rgb[at + 1] = color.g;
    rgb[at + 2] = color.b;
}

void RasterImage::fill_rect(int x, int y, int w, int h, Rgb color) {
    const int x0 = std::max(x, 0), y0 = std::max(y, 0);
    const int x1 = std::min(x + w, width), y1 = std::min(y + h, height);
    for (int yy = y0; yy < y1; ++yy) {
        uint8_t* row = rgb.data() + (static_cast<size_t>(yy) * width) * 3;
        for (int xx = x0; xx < x1; ++xx) {
            row[3 * xx] = color.r;
            row[3 * xx + 1] = color.g;
            row[3 * xx + 2] = color.b;
        }
    }
}

void RasterImage::stroke_rect(int x, int y, int w, int h, Rgb color) {
    fill_rect(x, y, w, 1, color);
    fill_rect(x, y + h - 1, w, 1, color);
    fill_rect(x, y, 1, h, color);
    fill_rect(x + w - 1, y, 1, h, color);
}

void RasterImage::fill_mask_hatch(int x, int y, int w, int h) {
    fill_rect(x, y, w, h, mask_color);
    if (w < 6 || h < 6) return;
    // Diagonals anchored to the canvas, so neighbouring masked cells join into one pattern;
    // the centre pixel of a cell is kept plain for legibility and for tests that sample it.
    for (int yy = y; yy < y + h; ++yy)
        for (int xx = x; xx < x + w; ++xx)
            if ((xx + yy) % 6 == 0 && !(xx == x + w / 2 && yy == y + h / 2)) set_pixel(xx, yy, mask_hatch_color);
}

void RasterImage::blend_pixel(int x, int y, Rgb color, int alpha) {
    if (x < 0 || y < 0 || x >= width || y >= height || alpha <= 0) return;
    const size_t at = (static_cast<size_t>(y) * width + x) * 3;
    const int a = std::min(alpha, 255);
    rgb[at] = static_cast<uint8_t>((color.r * a + rgb[at] * (255 - a) + 127) / 255);
    rgb[at + 1] = static_cast<uint8_t>((color.g * a + rgb[at + 1] * (255 - a) + 127) / 255);
    rgb[at + 2] = static_cast<uint8_t>((color.b * a + rgb[at + 2] * (255 - a) + 127) / 255);
}

void RasterImage::paste(const RasterImage& source, int x, int y) {
    for (int yy = 0; yy < source.height; ++yy)
        for (int xx = 0; xx < source.width; ++xx) set_pixel(x + xx, y + yy, source.pixel(xx, yy));
}

}  // namespace attn_viz
