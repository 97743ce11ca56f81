// Bytes as one zlib stream (RFC 1950) through libdeflate, for data embedded in report.html
// (browsers inflate it with DecompressionStream('deflate')).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn_viz {

// level: libdeflate's 1 (fastest) .. 12 (smallest). Throws Error(internal) if libdeflate fails.
std::vector<uint8_t> zlib_compress(const uint8_t* data, size_t size, int level);

}  // namespace attn_viz
