// Palette-indexed canvas primitives (see raster_image.hpp).
#include "raster_image.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

namespace {

uint32_t packed(Rgb color) { return (uint32_t{color.r} << 16) | (uint32_t{color.g} << 8) | color.b; }

// Fibonacci hashing of the 24-bit color into a table of 2^bits slots.
size_t slot_of(Rgb color, int bits) { return static_cast<size_t>((packed(color) * 2654435769u) >> (32 - bits)); }

int table_bits(size_t slots) { return static_cast<int>(__builtin_ctzll(slots)); }

}  // namespace

RasterImage::RasterImage(int width_, int height_, Rgb fill)
    : width(width_), height(height_), indices(static_cast<size_t>(width_) * height_), color_slots_(64, 0) {
    palette.push_back(fill);  // index 0: every pixel starts as the fill color
    color_slots_[slot_of(fill, table_bits(color_slots_.size()))] = 1;
    last_color_ = fill;
}

uint16_t RasterImage::color_index(Rgb color) {
    if (color == last_color_) return last_index_;
    last_color_ = color;
    // Step 1: probe the table; the slot holds palette index + 1.
    const int bits = table_bits(color_slots_.size());
    const size_t mask = color_slots_.size() - 1;
    size_t slot = slot_of(color, bits);
    for (; color_slots_[slot] != 0; slot = (slot + 1) & mask)
        if (palette[color_slots_[slot] - 1u] == color)
            return last_index_ = static_cast<uint16_t>(color_slots_[slot] - 1u);
    // Step 2: a new color goes at the palette's end; keep the table at most half full.
    if (palette.size() >= 65535)
        throw Error(ErrorKind::internal,
                    fmt::format("raster_image: more than 65535 colors in one {}x{} picture", width, height));
    palette.push_back(color);
    color_slots_[slot] = static_cast<uint16_t>(palette.size());
    if (palette.size() * 2 > color_slots_.size()) rehash_colors();
    return last_index_ = static_cast<uint16_t>(palette.size() - 1);
}

void RasterImage::rehash_colors() {
    color_slots_.assign(color_slots_.size() * 2, 0);
    const int bits = table_bits(color_slots_.size());
    const size_t mask = color_slots_.size() - 1;
    for (size_t i = 0; i < palette.size(); ++i) {
        size_t slot = slot_of(palette[i], bits);
        while (color_slots_[slot] != 0) slot = (slot + 1) & mask;
        color_slots_[slot] = static_cast<uint16_t>(i + 1);
    }
}

void RasterImage::set_pixel(int x, int y, Rgb color) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    indices[static_cast<size_t>(y) * width + x] = color_index(color);
}

void RasterImage::fill_rect_index(int x, int y, int w, int h, uint16_t index) {
    const int x0 = std::max(x, 0), y0 = std::max(y, 0);
    const int x1 = std::min(x + w, width), y1 = std::min(y + h, height);
    if (x0 >= x1) return;
    for (int yy = y0; yy < y1; ++yy) {
        uint16_t* row = indices.data() + static_cast<size_t>(yy) * width;
        std::fill(row + x0, row + x1, index);
    }
}

void RasterImage::fill_cell_row(int x, int y, int w, int h, const uint16_t* cell_indices, int n) {
    const int y0 = std::max(y, 0), y1 = std::min(y + h, height);
    const int x0 = std::max(x, 0), x1 = std::min(x + n * w, width);
    if (y0 >= y1 || x0 >= x1 || w <= 0) return;
    // Step 1: the first visible pixel row, cell by cell (1-px cells: a straight copy).
    uint16_t* first = indices.data() + static_cast<size_t>(y0) * width;
    if (w == 1) {
        std::copy(cell_indices + (x0 - x), cell_indices + (x1 - x), first + x0);
    } else {
        for (int k = 0; k < n; ++k) {
            const int from = std::max(x + k * w, x0), to = std::min(x + (k + 1) * w, x1);
            for (int xx = from; xx < to; ++xx) first[xx] = cell_indices[k];
        }
    }
    // Step 2: the same pixels on the other rows of the cells.
    for (int yy = y0 + 1; yy < y1; ++yy)
        std::copy(first + x0, first + x1, indices.data() + static_cast<size_t>(yy) * width + x0);
}

void RasterImage::fill_rect(int x, int y, int w, int h, Rgb color) {
    if (w <= 0 || h <= 0) return;
    fill_rect_index(x, y, w, h, color_index(color));
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
    const uint16_t hatch = color_index(mask_hatch_color);
    for (int yy = std::max(y, 0); yy < std::min(y + h, height); ++yy)
        for (int xx = std::max(x, 0); xx < std::min(x + w, width); ++xx)
            if ((xx + yy) % 6 == 0 && !(xx == x + w / 2 && yy == y + h / 2))
                indices[static_cast<size_t>(yy) * width + xx] = hatch;
}

void RasterImage::blend_pixel(int x, int y, Rgb color, int alpha) {
    const int a = (std::min(alpha, 255) + 8) / 17 * 17;  // nearest of the 16 levels
    if (x < 0 || y < 0 || x >= width || y >= height || a <= 0) return;
    const Rgb under = pixel(x, y);
    auto mix = [a](uint8_t over, uint8_t below) {
        return static_cast<uint8_t>((over * a + below * (255 - a) + 127) / 255);
    };
    set_pixel(x, y, Rgb{mix(color.r, under.r), mix(color.g, under.g), mix(color.b, under.b)});
}

LevelPalette::LevelPalette(RasterImage& image, const Colormap& colormap) : image_(image), colormap_(colormap) {
    indices_.fill(-1);
}

}  // namespace attn_viz
