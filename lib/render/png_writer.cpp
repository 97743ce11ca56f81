// PNG chunks written by hand around a libdeflate zlib stream (see png_writer.hpp).
#include "png_writer.hpp"

#include <libdeflate.h>

#include <memory>
#include <utility>
#include <string_view>

#include "error.hpp"
#include "file_write.hpp"

namespace attn_viz {

namespace {

// libdeflate level 1: on indexed heatmaps 40% faster than level 3 for 8% larger files
// (measured 2026-11-22, see docs/rendering.md).
constexpr int compression_level = 1;

void put_u32(std::vector<uint8_t>& out, uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

// Appends one chunk: length, type, data, CRC-32 of type and data.
void put_chunk(std::vector<uint8_t>& out, const char (&type)[5], const uint8_t* data, size_t size) {
    put_u32(out, static_cast<uint32_t>(size));
    const size_t type_at = out.size();
    out.insert(out.end(), type, type + 4);
    if (size > 0) out.insert(out.end(), data, data + size);
    put_u32(out, libdeflate_crc32(0, out.data() + type_at, size + 4));
}

// Bytes that are written before being read: no zero-fill (a zeroed megabyte costs its page
// faults and a memset for nothing).
struct ByteBuffer {
    std::unique_ptr<uint8_t[]> bytes;
    size_t size = 0;
    explicit ByteBuffer(size_t n) : bytes(new uint8_t[n]), size(n) {}
};

// The image data before compression: each row is filter byte 0 then the row's pixels, one
// palette index each (indexed) or three bytes r, g, b (RGB). Returns [height, 1 + width * bytes].
ByteBuffer filtered_rows(const RasterImage& image, bool indexed) {
    const size_t row_bytes = 1 + static_cast<size_t>(image.width) * (indexed ? 1 : 3);
    ByteBuffer rows(row_bytes * static_cast<size_t>(image.height));
    for (int y = 0; y < image.height; ++y) {
        uint8_t* out = rows.bytes.get() + row_bytes * static_cast<size_t>(y);
        const uint16_t* in = image.indices.data() + static_cast<size_t>(y) * image.width;
        *out++ = 0;
        if (indexed) {
            for (int x = 0; x < image.width; ++x) out[x] = static_cast<uint8_t>(in[x]);
        } else {
            for (int x = 0; x < image.width; ++x) {
                const Rgb color = image.palette[in[x]];
                out[3 * x] = color.r, out[3 * x + 1] = color.g, out[3 * x + 2] = color.b;
            }
        }
    }
    return rows;
}

// zlib stream of data at compression_level: the buffer and the stream's length in it.
std::pair<ByteBuffer, size_t> zlib_compress(const ByteBuffer& data) {
    const std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
        libdeflate_alloc_compressor(compression_level), &libdeflate_free_compressor);
    if (!compressor) throw Error(ErrorKind::internal, "png_writer: cannot allocate a libdeflate compressor (out of memory?)");
    ByteBuffer out(libdeflate_zlib_compress_bound(compressor.get(), data.size));
    const size_t written = libdeflate_zlib_compress(compressor.get(), data.bytes.get(), data.size, out.bytes.get(), out.size);
    if (written == 0) throw Error(ErrorKind::internal, "png_writer: libdeflate could not compress " + std::to_string(data.size) + " bytes");
    return {std::move(out), written};
}

}  // namespace

std::vector<uint8_t> encode_png(const RasterImage& image) {
    if (image.width <= 0 || image.height <= 0)
        throw Error(ErrorKind::internal, "png_writer: empty image " + std::to_string(image.width) + "x" +
                                             std::to_string(image.height));
    // Step 1: header: size, bit depth 8, color type 3 (indexed) or 2 (RGB), default methods.
    const bool indexed = image.palette.size() <= 256;
    std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    std::vector<uint8_t> header;
    put_u32(header, static_cast<uint32_t>(image.width));
    put_u32(header, static_cast<uint32_t>(image.height));
    header.insert(header.end(), {8, static_cast<uint8_t>(indexed ? 3 : 2), 0, 0, 0});
    put_chunk(png, "IHDR", header.data(), header.size());
    // Step 2: the palette, r g b per entry.
    if (indexed) {
        std::vector<uint8_t> palette;
        for (const Rgb& color : image.palette) palette.insert(palette.end(), {color.r, color.g, color.b});
        put_chunk(png, "PLTE", palette.data(), palette.size());
    }
    // Step 3: the compressed rows, then the end marker.
    const auto [data, length] = zlib_compress(filtered_rows(image, indexed));
    put_chunk(png, "IDAT", data.bytes.get(), length);
    put_chunk(png, "IEND", nullptr, 0);
    return png;
}

void write_png(const std::string& path, const RasterImage& image) {
    const std::vector<uint8_t> png = encode_png(image);
    write_file_bytes(path, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
}

}  // namespace attn_viz
