// PNG encoding of RasterImage: stb_image_write with libdeflate as its compressor.
// Safe to call from several threads at once. The PNG row filter is forced to 2 (Up), which suits
// pictures made of cells enlarged by repeating pixels; stb keeps that choice in a process-wide
// global, set exactly once (std::call_once) before the first encode, never changed afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "raster_image.hpp"

namespace attn_viz {

// The PNG file's bytes.
std::vector<uint8_t> encode_png(const RasterImage& image);

// Writes the PNG to path; throws Error(io, "<path>: ...") when it cannot.
void write_png(const std::string& path, const RasterImage& image);

}  // namespace attn_viz
