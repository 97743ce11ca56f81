// PNG encoding of RasterImage with stb_image_write (its implementation is compiled in
// png_writer.cpp only), with libdeflate as its zlib compressor and CRC-32. The palette-indexed
// canvas is expanded to 8-bit gray (color type 0) when every color it holds is a gray, else to
// 8-bit RGB (color type 2); decoded pixels are exactly the canvas's. Every row uses the PNG filter
// png_row_filter. Safe to call from several threads at once: stb's
// settings are process-wide globals, set once by the first call before any encoding reads them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "raster_image.hpp"

namespace attn_viz {

// The filter of every row (stb's stbi_write_force_png_filter): 0 None, 1 Sub, 2 Up, 3 Average,
// 4 Paeth. Up: chosen by measuring 0..4 on attn-viz's pictures (docs/rendering.md).
inline constexpr int png_row_filter = 2;

// The PNG file's bytes. Throws Error(internal) for an empty or too large image or a failed
// compression.
std::vector<uint8_t> encode_png(const RasterImage& image);

// Writes the PNG to path; throws Error(io, "<path>: ...") when it cannot.
void write_png(const std::string& path, const RasterImage& image);

}  // namespace attn_viz
