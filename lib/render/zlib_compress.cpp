// zlib streams through libdeflate (see zlib_compress.hpp).
#include "zlib_compress.hpp"

#include <libdeflate.h>

#include <memory>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

std::vector<uint8_t> zlib_compress(const uint8_t* data, size_t size, int level) {
    const std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
        libdeflate_alloc_compressor(level), &libdeflate_free_compressor);
    if (!compressor)
        throw Error(ErrorKind::internal, fmt::format("zlib: cannot allocate a compressor at level {}", level));
    std::vector<uint8_t> out(libdeflate_zlib_compress_bound(compressor.get(), size));
    const size_t written = libdeflate_zlib_compress(compressor.get(), data, size, out.data(), out.size());
    if (written == 0) throw Error(ErrorKind::internal, fmt::format("zlib: {} bytes did not fit the bound", size));
    out.resize(written);
    return out;
}

}  // namespace attn_viz
