// Render suite, part 4: the PNG writer (gray, indexed and RGB files decode to exactly the canvas,
// every chunk's CRC holds, every row with the chosen filter) and the colormap's quantization to
// raster_levels entries.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "error.hpp"
#include "font.hpp"
#include "heatmap.hpp"
#include "png_writer.hpp"
#include "raster_image.hpp"
#include "render_test_support.hpp"

using namespace attn_viz;
using namespace test_support;
using namespace render_test;

namespace {

// PNG bytes -> pixels, with stb_image (an independent decoder).
DecodedPng decode_bytes(const std::vector<uint8_t>& png) {
    DecodedPng out;
    int channels = 0;
    unsigned char* pixels =
        stbi_load_from_memory(png.data(), static_cast<int>(png.size()), &out.width, &out.height, &channels, 3);
    if (!pixels) return {};
    out.rgb.assign(pixels, pixels + static_cast<size_t>(out.width) * out.height * 3);
    stbi_image_free(pixels);
    return out;
}

uint32_t read_u32(const std::vector<uint8_t>& bytes, size_t at) {
    return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) | (uint32_t{bytes[at + 2]} << 8) |
           bytes[at + 3];
}

// CRC-32 as the PNG specification defines it (reflected polynomial 0xEDB88320), bit by bit: an
// implementation independent of the writer's libdeflate.
uint32_t reference_crc32(const uint8_t* data, size_t size) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
}

// What the chunks say: their types in order, IHDR's size, bit depth and color type (0 gray, 2 RGB,
// 3 indexed), PLTE's entries, how many chunks' CRCs are wrong, and the IDAT stream inflated by
// stb_image's zlib decoder: per row, its filter byte then its bytes.
struct PngChunks {
    std::vector<std::string> types;
    int width = -1, height = -1, bit_depth = -1, color_type = -1;
    std::vector<Rgb> palette;
    int bad_crcs = 0;
    std::vector<uint8_t> filtered_rows;
};

PngChunks read_chunks(const std::vector<uint8_t>& png) {
    const std::vector<uint8_t> signature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    REQUIRE(png.size() >= 8);
    CHECK(std::equal(signature.begin(), signature.end(), png.begin()));
    PngChunks out;
    std::vector<uint8_t> idat;
    size_t at = 8;
    for (; at + 12 <= png.size();) {
        const size_t length = read_u32(png, at);
        REQUIRE(at + 12 + length <= png.size());
        const std::string type(png.begin() + static_cast<std::ptrdiff_t>(at + 4),
                               png.begin() + static_cast<std::ptrdiff_t>(at + 8));
        out.types.push_back(type);
        out.bad_crcs += reference_crc32(png.data() + at + 4, length + 4) != read_u32(png, at + 8 + length);
        const auto data = png.begin() + static_cast<std::ptrdiff_t>(at + 8);
        if (type == "IHDR") {
            REQUIRE(length == 13);
            out.width = static_cast<int>(read_u32(png, at + 8)), out.height = static_cast<int>(read_u32(png, at + 12));
            out.bit_depth = data[8], out.color_type = data[9];
        }
        if (type == "PLTE")
            for (size_t k = 0; k + 3 <= length; k += 3) out.palette.push_back({data[k], data[k + 1], data[k + 2]});
        if (type == "IDAT") idat.insert(idat.end(), data, data + static_cast<std::ptrdiff_t>(length));
        at += 12 + length;
    }
    CHECK(at == png.size());  // nothing after the last chunk
    int length = 0;
    char* rows =
        stbi_zlib_decode_malloc(reinterpret_cast<const char*>(idat.data()), static_cast<int>(idat.size()), &length);
    REQUIRE(rows != nullptr);
    out.filtered_rows.assign(rows, rows + length);
    stbi_image_free(rows);
    return out;
}

// A canvas of random rectangles drawn from `colors` random colors (plus the white fill), grays
// only (r = g = b) when `gray`.
RasterImage random_canvas(int width, int height, int colors, bool gray = false) {
    std::uniform_int_distribution<int> byte(0, 255), x_at(0, width - 1), y_at(0, height - 1), side(1, 7);
    std::vector<Rgb> choices;
    for (int k = 0; k < colors; ++k) {
        const auto r = static_cast<uint8_t>(byte(rng()));
        choices.push_back(gray ? Rgb{r, r, r}
                               : Rgb{r, static_cast<uint8_t>(byte(rng())), static_cast<uint8_t>(byte(rng()))});
    }
    RasterImage image(width, height);
    for (int k = 0; k < 4 * colors + 20; ++k)
        image.fill_rect(x_at(rng()), y_at(rng()), side(rng()), side(rng()), choices[static_cast<size_t>(k % colors)]);
    return image;
}

// A canvas holding exactly `colors` distinct colors (none of them a gray), each on at least one
// pixel, the other pixels in random ones of them, in runs like heatmap cells. Needs width x
// height >= colors.
RasterImage exact_palette_canvas(int width, int height, int colors) {
    auto color = [](int k) {  // distinct for k < 65536; b != r, so never a gray
        const auto r = static_cast<uint8_t>(k & 255);
        return Rgb{r, static_cast<uint8_t>(k >> 8), static_cast<uint8_t>(r ^ 0x55)};
    };
    std::uniform_int_distribution<int> pick(0, colors - 1), run(1, 9);
    RasterImage image(width, height, color(0));
    int current = 0, left = 0;
    for (int p = 0; p < width * height; ++p) {
        if (left-- == 0) current = pick(rng()), left = run(rng());
        image.set_pixel(p % width, p / width, color(p < colors ? p : current));
    }
    REQUIRE(static_cast<int>(image.palette.size()) == colors);
    return image;
}

// The color type the writer must choose: gray when every palette color is a gray, indexed up to
// 256 colors, RGB beyond.
int expected_color_type(const RasterImage& image) {
    const bool gray =
        std::all_of(image.palette.begin(), image.palette.end(), [](Rgb c) { return c.r == c.g && c.g == c.b; });
    return gray ? 0 : image.palette.size() <= 256 ? 3 : 2;
}

// The written file decodes (stb_image, which expands palettes) to exactly the canvas; its chunks
// are IHDR, PLTE (indexed files: the canvas's palette), IDAT, IEND with valid CRCs; the color type
// is expected_color_type and every row uses the filter of that type.
void check_round_trip(const RasterImage& image) {
    const int color_type = expected_color_type(image);
    CHECK(png_color_type(image) == color_type);
    const std::vector<uint8_t> png = encode_png(image);
    CHECK(differing_pixels(decode_bytes(png), image) == 0);
    const PngChunks chunks = read_chunks(png);
    CHECK(chunks.bad_crcs == 0);
    CHECK(chunks.width == image.width);
    CHECK(chunks.height == image.height);
    CHECK(chunks.bit_depth == 8);
    CHECK(chunks.color_type == color_type);
    REQUIRE(!chunks.types.empty());
    CHECK(chunks.types.front() == "IHDR");
    CHECK(chunks.types.back() == "IEND");
    CHECK(std::count(chunks.types.begin(), chunks.types.end(), "PLTE") == (color_type == 3 ? 1 : 0));
    if (color_type == 3) CHECK(chunks.palette == image.palette);
    const size_t row_bytes = 1 + static_cast<size_t>(image.width) * (color_type == 2 ? 3 : 1);
    REQUIRE(chunks.filtered_rows.size() == row_bytes * static_cast<size_t>(image.height));
    const int filter = color_type == 3 ? png_indexed_row_filter : png_row_filter;
    int other_filters = 0;
    for (int y = 0; y < image.height; ++y)
        other_filters += chunks.filtered_rows[row_bytes * static_cast<size_t>(y)] != filter;
    CHECK(other_filters == 0);
}

}  // namespace

TEST_SUITE("render") {

TEST_CASE("PNG writer: gray, indexed and RGB files decode to exactly the canvas, odd sizes and 1x1 included") {
    for (const auto& [width, height] :
         std::vector<std::pair<int, int>>{{1, 1}, {1, 9}, {7, 1}, {13, 11}, {64, 33}, {301, 97}}) {
        CAPTURE(width);
        CAPTURE(height);
        check_round_trip(RasterImage(width, height, Rgb{12, 200, 99}));
        check_round_trip(RasterImage(width, height));  // white: gray
        check_round_trip(random_canvas(width, height, 40));
        check_round_trip(random_canvas(width, height, 40, true));
        check_round_trip(random_canvas(width, height, 400));
    }
    // One colored pixel among grays makes the whole picture indexed; past 256 colors it is RGB.
    RasterImage almost_gray = random_canvas(50, 40, 30, true);
    almost_gray.set_pixel(49, 39, Rgb{10, 11, 10});
    check_round_trip(almost_gray);
    CHECK(read_chunks(encode_png(almost_gray)).color_type == 3);
    CHECK_THROWS_AS(encode_png(RasterImage(0, 5)), Error);
}

TEST_CASE("PNG writer: indexed up to 256 colors, RGB from 257, at the exact counts and odd sizes") {
    for (const auto& [width, height] :
         std::vector<std::pair<int, int>>{{1, 1}, {1, 300}, {1, 5003}, {3, 2}, {17, 19}, {97, 61}, {255, 33}}) {
        for (int colors : {1, 2, 255, 256, 257, 4000}) {
            if (colors > width * height) continue;
            CAPTURE(width);
            CAPTURE(height);
            CAPTURE(colors);
            const RasterImage image = exact_palette_canvas(width, height, colors);
            CHECK(png_color_type(image) == (colors <= 256 ? 3 : 2));
            check_round_trip(image);
        }
    }
    // 256 grays stay gray.
    RasterImage grays(16, 16);
    for (int k = 0; k < 256; ++k)
        grays.set_pixel(k % 16, k / 16, Rgb{static_cast<uint8_t>(k), static_cast<uint8_t>(k), static_cast<uint8_t>(k)});
    REQUIRE(grays.palette.size() == 256);
    CHECK(png_color_type(grays) == 0);
    check_round_trip(grays);
}

TEST_CASE("fill_cell_row draws what one fill_rect per cell draws, clipped at every edge") {
    std::uniform_int_distribution<int> position(-12, 40), size(1, 5), count(1, 14), byte(0, 255);
    for (int k = 0; k < 300; ++k) {
        const int x = position(rng()), y = position(rng()), w = k % 3 == 0 ? 1 : size(rng()), h = size(rng()),
                  n = count(rng());
        CAPTURE(x);
        CAPTURE(y);
        CAPTURE(w);
        CAPTURE(n);
        RasterImage by_row(31, 23), by_cell(31, 23);
        std::vector<uint16_t> cells;
        for (int c = 0; c < n; ++c) {
            const Rgb color{static_cast<uint8_t>(byte(rng())), static_cast<uint8_t>(byte(rng())), 7};
            cells.push_back(by_row.color_index(color));
            by_cell.fill_rect(x + c * w, y, w, h, color);
        }
        by_row.fill_cell_row(x, y, w, h, cells.data(), n);
        int wrong = 0;
        for (int yy = 0; yy < 23; ++yy)
            for (int xx = 0; xx < 31; ++xx) wrong += !(by_row.pixel(xx, yy) == by_cell.pixel(xx, yy));
        CHECK(wrong == 0);
    }
}

TEST_CASE("text blending uses 16 coverage levels, so text over white adds at most 15 colors") {
    RasterImage image(300, 140);
    draw_placed_text(image, {"The quick brown fox, #120 \u2423jumps", 4, 4, 290, 30, 16.0f});
    draw_placed_text(image, {"upward", 4, 44, 20, 80, 12.0f, TextDirection::upward});
    CHECK(image.palette.size() <= 16);
    CHECK(image.palette.size() >= 8);  // antialiased, not just black and white
    for (const Rgb& color : image.palette) {
        CHECK(color.r == color.g);  // grays between text_color and white
        CHECK(color.r >= text_color.r);
    }
}

TEST_CASE("colormap quantization for PNGs: monotone, evenly spaced, ends are the colormap's ends") {
    for (const std::string& name : Colormap::names()) {
        CAPTURE(name);
        const Colormap map = Colormap::named(name);
        CHECK(map.raster_at(0.0) == map.entry(0));
        CHECK(map.raster_at(1.0) == map.entry(255));
        CHECK(map.raster_at(-3.0) == map.entry(0));
        CHECK(map.raster_at(std::nan("")) == map.entry(0));
        CHECK(map.raster_at(7.0) == map.entry(255));
        // Each level is the entry nearest to it, levels step through the table in order.
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        for (int k = 0; k < 2000; ++k) {
            const double position = unit(rng());
            const long level = std::lround(position * (raster_levels - 1));
            const long index = std::lround(static_cast<double>(level) * 255.0 / (raster_levels - 1));
            CHECK(map.raster_at(position) == map.entry(static_cast<int>(index)));
        }
        if (name == "gray")  // gray levels show the order directly
            for (int level = 1; level < raster_levels; ++level)
                CHECK(map.raster_at(static_cast<double>(level) / (raster_levels - 1)).r >
                      map.raster_at(static_cast<double>(level - 1) / (raster_levels - 1)).r);
    }
}

TEST_CASE("labelled, masked per-head pictures decode to exactly their canvas: indexed for viridis, gray for gray") {
    for (const std::string colormap : {"viridis", "gray"}) {
        for (int64_t t : {1, 9, 40}) {
            CAPTURE(colormap);
            CAPTURE(t);
            const Visibility v = square_visibility(t, true);
            const std::vector<float> w = random_attention(v);
            HeatmapStyle style;
            style.colormap = colormap;
            style.title = "head 3 - previous-token - entropy 0.42 nats";
            const ValueRange range = visible_value_range(w.data(), v);
            style.vmin = range.vmin, style.vmax = range.vmax;
            const HeatmapLayout layout = layout_heatmap(w.data(), v, {}, {}, style);
            const RasterImage image = render_heatmap(layout, style);
            const std::vector<uint8_t> png = encode_png(image);
            CHECK(image.palette.size() <= 256);
            CHECK(read_chunks(png).color_type == (colormap == "gray" ? 0 : 3));
            const DecodedPng decoded = decode_bytes(png);
            CHECK(differing_pixels(decoded, image) == 0);
            CHECK(cell_pixel(decoded, layout, t - 1, 0) == expected_color(style, w[static_cast<size_t>((t - 1) * t)]));
        }
    }
}

}  // TEST_SUITE("render")
