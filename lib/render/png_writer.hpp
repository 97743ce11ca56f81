// PNG encoding of RasterImage, written chunk by chunk (signature, IHDR, PLTE, IDAT, IEND) with
// libdeflate for the zlib stream and the CRC-32. A picture of at most 256 colors becomes an
// indexed PNG (color type 3, 1 byte per pixel); a larger palette falls back to RGB (color type 2).
// Rows use filter 0 (None): on these pictures it compresses better than Up for indices and costs
// nothing to apply. Safe to call from several threads at once (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "raster_image.hpp"

namespace attn_viz {

// The PNG file's bytes. Throws Error(internal) for an empty image or a failed compression.
std::vector<uint8_t> encode_png(const RasterImage& image);

// Writes the PNG to path; throws Error(io, "<path>: ...") when it cannot.
void write_png(const std::string& path, const RasterImage& image);

}  // namespace attn_viz
