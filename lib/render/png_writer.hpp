// PNG encoding of RasterImage, in the smallest of three forms that holds its pixels exactly: 8-bit
// gray (color type 0) when every color of the palette is a gray; else indexed (color type 3, bit
// depth 8, the canvas's palette as PLTE) when the palette has at most 256 colors, as every
// heatmap's does (232 colormap levels, text grays); else 8-bit RGB (color type 2). Indexed files
// are written here chunk by chunk (stb_image_write writes no palettes), gray and RGB files by
// stb_image_write (its implementation is compiled in png_writer.cpp only); libdeflate compresses
// both and computes their CRC-32s. Safe to call from several threads at once: stb's settings are
// process-wide globals, set once by the first call before any encoding reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "raster_image.hpp"

namespace attn_viz {

// The filter of every row of a gray or RGB file (stb's stbi_write_force_png_filter): 0 None,
// 1 Sub, 2 Up, 3 Average, 4 Paeth. Up: chosen by measuring 0..4 on attn-viz's pictures
// (docs/rendering.md).
inline constexpr int png_row_filter = 2;

// The filter of every row of an indexed file: None. On attn-viz's pictures it took 4-14% less CPU
// than Up and gave 10-28% smaller files (Up's differences of palette indices are no smoother than
// the indices; rows repeated down a cell are back-references for deflate either way); only the
// small demo's files were 9% larger (docs/rendering.md, 2026-12-02).
inline constexpr int png_indexed_row_filter = 0;

// The color type encode_png writes for image: 0 (gray), 3 (indexed) or 2 (RGB), as above.
int png_color_type(const RasterImage& image);

// The PNG file's bytes. Throws Error(internal) for an empty or too large image or a failed
// compression.
std::vector<uint8_t> encode_png(const RasterImage& image);

// Writes the PNG to path; throws Error(io, "<path>: ...") when it cannot.
void write_png(const std::string& path, const RasterImage& image);

}  // namespace attn_viz
