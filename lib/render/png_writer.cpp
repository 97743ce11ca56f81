// PNGs (see png_writer.hpp): indexed files written chunk by chunk around a libdeflate zlib
// stream; gray and RGB files through stb_image_write with libdeflate behind its compression hooks.
#include "png_writer.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "error.hpp"
#include "file_write.hpp"
#include "zlib_compress.hpp"

namespace {

// stb_image_write's STBIW_ZLIB_COMPRESS hook: data[0, data_len) as a zlib stream compressed by
// libdeflate at `level`, in memory from malloc (stb releases it with free()); the stream's length
// goes to *out_len. nullptr when memory runs out or the stream does not fit an int.
unsigned char* libdeflate_zlib_compress_for_stb(unsigned char* data, int data_len, int* out_len, int level) {
    const std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
        libdeflate_alloc_compressor(level), &libdeflate_free_compressor);
    if (!compressor) return nullptr;
    const size_t bound = libdeflate_zlib_compress_bound(compressor.get(), static_cast<size_t>(data_len));
    if (bound > INT_MAX) return nullptr;
    auto* out = static_cast<unsigned char*>(std::malloc(bound));
    if (!out) return nullptr;
    const size_t written = libdeflate_zlib_compress(compressor.get(), data, static_cast<size_t>(data_len), out, bound);
    if (written == 0) {
        std::free(out);
        return nullptr;
    }
    *out_len = static_cast<int>(written);
    return out;
}

}  // namespace

// stb_image_write, compiled here only: static functions and settings (nothing else in the program
// can change the settings), no stdio (files are written by write_file_bytes).
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#define STBIW_ZLIB_COMPRESS libdeflate_zlib_compress_for_stb
#define STBIW_CRC32(buffer, len) libdeflate_crc32(0, buffer, static_cast<size_t>(len))
#define STB_IMAGE_WRITE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb_image_write.h>

#include <fmt/format.h>
#pragma GCC diagnostic pop

namespace attn_viz {

namespace {

// libdeflate's level. With png_row_filter 2 (Up), level 2 took less CPU than level 1 and gave
// 2-8% smaller files on attn-viz's pictures; level 3 took a little more CPU for files within 5%
// (measured 2026-11-23, docs/rendering.md).
constexpr int compression_level = 2;

// stb reads its settings, process-wide globals, in every encode: they are written once, by the
// first call (a function-local static is initialised exactly once; concurrent first callers wait
// for it), before any encoding reads them.
void configure_stb_once() {
    static const bool configured = [] {
        stbi_write_force_png_filter = png_row_filter;
        stbi_write_png_compression_level = compression_level;  // handed to the hook as its level
        return true;
    }();
    (void)configured;
}

// The image's pixels as stb_image_write takes them, [height, width, channels] bytes: one gray byte
// per pixel (gray) or r, g, b.
struct PixelBytes {
    std::unique_ptr<uint8_t[]> bytes;  // not zero-filled: every byte is written
    int channels = 0;
};

PixelBytes expand_palette(const RasterImage& image, bool gray) {
    PixelBytes pixels;
    pixels.channels = gray ? 1 : 3;
    const size_t count = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
    pixels.bytes = std::make_unique_for_overwrite<uint8_t[]>(count * static_cast<size_t>(pixels.channels));
    const size_t width = static_cast<size_t>(image.width), row_bytes = width * static_cast<size_t>(pixels.channels);
    for (size_t y = 0; y < static_cast<size_t>(image.height); ++y) {
        const uint16_t* in = image.indices.data() + y * width;
        uint8_t* out = pixels.bytes.get() + y * row_bytes;
        // Heatmap cells are several pixels tall: a row like the one above is copied, not looked up.
        if (y > 0 && std::memcmp(in, in - width, width * sizeof(uint16_t)) == 0) {
            std::memcpy(out, out - row_bytes, row_bytes);
        } else if (gray) {
            for (size_t x = 0; x < width; ++x) out[x] = image.palette[in[x]].r;
        } else {
            for (size_t x = 0; x < width; ++x) {
                const Rgb color = image.palette[in[x]];
                out[3 * x] = color.r, out[3 * x + 1] = color.g, out[3 * x + 2] = color.b;
            }
        }
    }
    return pixels;
}

std::string size_text(const RasterImage& image) { return fmt::format("{}x{}", image.width, image.height); }

// The gray or RGB file's bytes from stb_image_write.
std::vector<uint8_t> encode_with_stb(const RasterImage& image, bool gray) {
    // stb sizes its buffers in int: the filtered rows, height x (1 + width x 3) bytes, and the
    // compressed stream (a little larger at worst) must fit.
    if ((3 * static_cast<int64_t>(image.width) + 1) * image.height > INT_MAX / 2)
        throw Error(ErrorKind::internal,
                    fmt::format("png_writer: image {} is too large for stb_image_write", size_text(image)));
    configure_stb_once();
    const PixelBytes pixels = expand_palette(image, gray);
    int length = 0;
    const std::unique_ptr<unsigned char, decltype(&std::free)> png(
        stbi_write_png_to_mem(pixels.bytes.get(), 0, image.width, image.height, pixels.channels, &length), &std::free);
    if (!png)
        throw Error(
            ErrorKind::internal,
            fmt::format("png_writer: stb_image_write could not encode a {} image (out of memory?)", size_text(image)));
    return std::vector<uint8_t>(png.get(), png.get() + length);
}

void put_u32(std::vector<uint8_t>& out, uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(value >> shift));
}

// Appends one chunk: its length, type, data, and the CRC-32 of type and data.
void put_chunk(std::vector<uint8_t>& out, const char (&type)[5], const uint8_t* data, size_t size) {
    put_u32(out, static_cast<uint32_t>(size));
    const size_t type_at = out.size();
    out.insert(out.end(), type, type + 4);
    out.insert(out.end(), data, data + size);
    put_u32(out, libdeflate_crc32(0, out.data() + type_at, size + 4));
}

// The indexed file (color type 3, bit depth 8): IHDR, PLTE (r, g, b per palette entry), one IDAT
// holding the zlib stream of the rows (each its filter byte, png_indexed_row_filter, then one index
// byte per pixel) and IEND. Needs at most 256 colors.
std::vector<uint8_t> encode_indexed(const RasterImage& image) {
    const size_t width = static_cast<size_t>(image.width), row_bytes = 1 + width;
    auto rows = std::make_unique_for_overwrite<uint8_t[]>(row_bytes * static_cast<size_t>(image.height));
    for (size_t y = 0; y < static_cast<size_t>(image.height); ++y) {
        const uint16_t* in = image.indices.data() + y * width;
        uint8_t* out = rows.get() + y * row_bytes;
        out[0] = static_cast<uint8_t>(png_indexed_row_filter);
        for (size_t x = 0; x < width; ++x) out[1 + x] = static_cast<uint8_t>(in[x]);
    }
    const std::vector<uint8_t> stream =
        zlib_compress(rows.get(), row_bytes * static_cast<size_t>(image.height), compression_level);
    if (stream.size() > INT32_MAX)  // a chunk's length is at most 2^31 - 1
        throw Error(ErrorKind::internal,
                    fmt::format("png_writer: image {} is too large for one IDAT chunk", size_text(image)));

    std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    png.reserve(png.size() + 3 * 12 + 13 + 3 * image.palette.size() + 12 + stream.size());
    std::vector<uint8_t> header;
    put_u32(header, static_cast<uint32_t>(image.width));
    put_u32(header, static_cast<uint32_t>(image.height));
    header.insert(header.end(), {8, 3, 0, 0, 0});  // bit depth, color type, deflate, filters, no interlace
    put_chunk(png, "IHDR", header.data(), header.size());
    std::vector<uint8_t> palette;
    for (const Rgb& color : image.palette) palette.insert(palette.end(), {color.r, color.g, color.b});
    put_chunk(png, "PLTE", palette.data(), palette.size());
    put_chunk(png, "IDAT", stream.data(), stream.size());
    put_chunk(png, "IEND", nullptr, 0);
    return png;
}

}  // namespace

int png_color_type(const RasterImage& image) {
    const bool gray = std::all_of(image.palette.begin(), image.palette.end(),
                                  [](Rgb color) { return color.r == color.g && color.g == color.b; });
    return gray ? 0 : image.palette.size() <= 256 ? 3 : 2;
}

std::vector<uint8_t> encode_png(const RasterImage& image) {
    if (image.width <= 0 || image.height <= 0)
        throw Error(ErrorKind::internal, fmt::format("png_writer: empty image {}", size_text(image)));
    const int color_type = png_color_type(image);
    return color_type == 3 ? encode_indexed(image) : encode_with_stb(image, color_type == 0);
}

void write_png(const std::string& path, const RasterImage& image) {
    const std::vector<uint8_t> png = encode_png(image);
    write_file_bytes(path, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
}

}  // namespace attn_viz
