// UTF-8 decoding and stb_truetype text rasterisation (see font.hpp).
#include "font.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "error.hpp"
#include "input_files.hpp"
#include "utf8.hpp"

#define STBTT_STATIC
#define STB_TRUETYPE_IMPLEMENTATION
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_truetype.h>
#pragma GCC diagnostic pop

namespace attn_viz {

namespace {

// Printable ASCII, the bulk of every label, gets its font lookups cached.
constexpr char32_t first_cached = 0x20, end_cached = 0x7F;
constexpr size_t cached_count = end_cached - first_cached;
constexpr int kern_unknown = std::numeric_limits<int>::min();

bool is_cached(char32_t c) { return c >= first_cached && c < end_cached; }

}  // namespace

struct Font::Info {
    stbtt_fontinfo info;
    int ascent = 0, descent = 0, line_gap = 0;
    // Glyph index and advance (font units) of each printable ASCII character, read at load.
    std::array<int, cached_count> glyph{}, advance{};
    // Kerning (font units) of each printable ASCII pair, read on first use (DejaVu kerns through
    // its GPOS table, whose lookup is slow); kern_unknown until then. Threads that race on a pair
    // store the same value.
    std::array<std::atomic<int>, cached_count * cached_count> kern;
};

Font::Font(const std::string& path) : info_(std::make_unique<Info>()) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(ErrorKind::io,
                    fmt::format("{}: font not found (install the Debian package fonts-dejavu-core)", path));
    record_input_file(path, "font");
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    const int offset = bytes_.empty() ? -1 : stbtt_GetFontOffsetForIndex(bytes_.data(), 0);
    if (offset < 0 || !stbtt_InitFont(&info_->info, bytes_.data(), offset))
        throw Error(ErrorKind::io,
                    fmt::format("{}: not a TrueType font (reinstall the Debian package fonts-dejavu-core)", path));
    stbtt_GetFontVMetrics(&info_->info, &info_->ascent, &info_->descent, &info_->line_gap);
    for (size_t k = 0; k < cached_count; ++k) {
        info_->glyph[k] = stbtt_FindGlyphIndex(&info_->info, static_cast<int>(first_cached + k));
        int bearing = 0;
        stbtt_GetGlyphHMetrics(&info_->info, info_->glyph[k], &info_->advance[k], &bearing);
    }
    for (std::atomic<int>& pair : info_->kern) pair.store(kern_unknown, std::memory_order_relaxed);
}

Font::~Font() = default;

const Font& Font::default_font() {
    static const Font font(ATTN_VIZ_FONT_PATH);
    return font;
}

bool Font::has_glyph(char32_t code_point) const {
    return stbtt_FindGlyphIndex(&info_->info, static_cast<int>(code_point)) != 0;
}

int Font::line_height(float pixel_height) const {
    const float scale = stbtt_ScaleForPixelHeight(&info_->info, pixel_height);
    return static_cast<int>(std::ceil((info_->ascent - info_->descent) * scale));
}

int Font::baseline(float pixel_height) const {
    return static_cast<int>(std::lround(info_->ascent * stbtt_ScaleForPixelHeight(&info_->info, pixel_height)));
}

float Font::em_size(float pixel_height) const {
    return stbtt_ScaleForPixelHeight(&info_->info, pixel_height) / stbtt_ScaleForMappingEmToPixels(&info_->info, 1.0f);
}

std::vector<Font::Glyph> Font::layout(const std::u32string& text, float scale, float pixel_height) const {
    // Advance widths plus kerning; a missing glyph takes a box 0.6 em wide. Printable ASCII
    // takes its glyph, advance and kerning from the caches in Info.
    std::vector<Glyph> glyphs;
    glyphs.reserve(text.size());
    float x = 0.0f;
    int previous = 0;
    char32_t previous_char = 0;
    for (char32_t c : text) {
        const bool cached = is_cached(c);
        const int index =
            cached ? info_->glyph[c - first_cached] : stbtt_FindGlyphIndex(&info_->info, static_cast<int>(c));
        float advance = 0.6f * pixel_height;
        if (index != 0) {
            int advance_units = 0, bearing = 0;
            if (cached)
                advance_units = info_->advance[c - first_cached];
            else
                stbtt_GetGlyphHMetrics(&info_->info, index, &advance_units, &bearing);
            advance = advance_units * scale;
            if (previous != 0) x += kerning(previous_char, previous, c, index) * scale;
        }
        glyphs.push_back({index, x, advance});
        x += advance;
        previous = index;
        previous_char = c;
    }
    return glyphs;
}

int Font::kerning(char32_t first_char, int first_glyph, char32_t second_char, int second_glyph) const {
    if (!is_cached(first_char) || !is_cached(second_char))
        return stbtt_GetGlyphKernAdvance(&info_->info, first_glyph, second_glyph);
    std::atomic<int>& pair = info_->kern[(first_char - first_cached) * cached_count + (second_char - first_cached)];
    int units = pair.load(std::memory_order_relaxed);
    if (units == kern_unknown) {
        units = stbtt_GetGlyphKernAdvance(&info_->info, first_glyph, second_glyph);
        pair.store(units, std::memory_order_relaxed);
    }
    return units;
}

int Font::text_width(std::string_view utf8, float pixel_height) const {
    const float scale = stbtt_ScaleForPixelHeight(&info_->info, pixel_height);
    const auto glyphs = layout(decode_utf8(utf8), scale, pixel_height);
    if (glyphs.empty()) return 0;
    return static_cast<int>(std::ceil(glyphs.back().x + glyphs.back().advance));
}

TextMask Font::render(std::string_view utf8, float pixel_height) const {
    const float scale = stbtt_ScaleForPixelHeight(&info_->info, pixel_height);
    const auto glyphs = layout(decode_utf8(utf8), scale, pixel_height);
    TextMask mask;
    mask.height = line_height(pixel_height);
    mask.baseline = baseline(pixel_height);
    mask.width = glyphs.empty() ? 0 : static_cast<int>(std::ceil(glyphs.back().x + glyphs.back().advance)) + 1;
    mask.alpha.assign(static_cast<size_t>(mask.width) * mask.height, 0);
    auto put = [&](int x, int y, int value) {
        if (x < 0 || y < 0 || x >= mask.width || y >= mask.height) return;
        uint8_t& cell = mask.alpha[static_cast<size_t>(y) * mask.width + x];
        cell = static_cast<uint8_t>(std::max<int>(cell, value));
    };
    std::vector<unsigned char> bitmap;
    for (const Glyph& g : glyphs) {
        if (g.glyph_index == 0) {
            // Box outline for a character the font lacks.
            const int x0 = static_cast<int>(g.x) + 1, x1 = static_cast<int>(g.x + g.advance) - 2;
            const int y0 = mask.baseline - static_cast<int>(0.7f * pixel_height), y1 = mask.baseline - 1;
            for (int x = x0; x <= x1; ++x) {
                put(x, y0, 255);
                put(x, y1, 255);
            }
            for (int y = y0; y <= y1; ++y) {
                put(x0, y, 255);
                put(x1, y, 255);
            }
            continue;
        }
        const float shift = g.x - std::floor(g.x);
        int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
        stbtt_GetGlyphBitmapBoxSubpixel(&info_->info, g.glyph_index, scale, scale, shift, 0, &x0, &y0, &x1, &y1);
        const int w = x1 - x0, h = y1 - y0;
        if (w <= 0 || h <= 0) continue;
        bitmap.assign(static_cast<size_t>(w) * h, 0);
        stbtt_MakeGlyphBitmapSubpixel(&info_->info, bitmap.data(), w, h, w, scale, scale, shift, 0, g.glyph_index);
        const int origin_x = static_cast<int>(std::floor(g.x)) + x0, origin_y = mask.baseline + y0;
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) put(origin_x + x, origin_y + y, bitmap[static_cast<size_t>(y) * w + x]);
    }
    return mask;
}

void draw_text_mask(RasterImage& image, const TextMask& mask, int x, int y, Rgb color, TextDirection direction) {
    for (int my = 0; my < mask.height; ++my) {
        for (int mx = 0; mx < mask.width; ++mx) {
            const int alpha = mask.alpha[static_cast<size_t>(my) * mask.width + mx];
            if (alpha == 0) continue;
            if (direction == TextDirection::horizontal)
                image.blend_pixel(x + mx, y + my, color, alpha);
            else  // rotated counter-clockwise: mask column -> image row from the bottom up
                image.blend_pixel(x + my, y + mask.width - 1 - mx, color, alpha);
        }
    }
}

namespace {

// Masks of the texts drawn lately with the default font, shared by every picture of the process:
// all head pictures of a run draw the same token labels. Emptied when it holds max_masks.
class TextMaskCache {
public:
    std::shared_ptr<const TextMask> get(const std::string& text, float pixel_height) {
        std::string key = text;
        key.append(reinterpret_cast<const char*>(&pixel_height), sizeof pixel_height);
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            const auto found = masks_.find(key);
            if (found != masks_.end()) return found->second;
        }
        // Rendered outside the lock; two threads racing on one text store equal masks.
        auto mask = std::make_shared<const TextMask>(Font::default_font().render(text, pixel_height));
        const std::lock_guard<std::mutex> lock(mutex_);
        if (masks_.size() >= max_masks) masks_.clear();
        masks_.emplace(std::move(key), mask);
        return mask;
    }

private:
    static constexpr size_t max_masks = 8192;  // a few MB of masks at most
    std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const TextMask>> masks_;
};

TextMaskCache& text_mask_cache() {
    static TextMaskCache cache;
    return cache;
}

}  // namespace

void draw_placed_text(RasterImage& image, const TextPlacement& placement, Rgb color) {
    const std::shared_ptr<const TextMask> mask = text_mask_cache().get(placement.text, placement.pixel_height);
    draw_text_mask(image, *mask, placement.x, placement.y, color, placement.direction);
}

std::string fit_text(const Font& font, const std::string& text, float pixel_height, int max_width) {
    if (font.text_width(text, pixel_height) <= max_width) return text;
    std::u32string points = decode_utf8(text);
    if (points.size() > 96) points.resize(96);  // no label is wider than this many characters
    while (!points.empty()) {
        points.pop_back();
        std::string candidate;
        for (char32_t c : points) candidate += encode_utf8(c);
        candidate += "\u2026";
        if (font.text_width(candidate, pixel_height) <= max_width) return candidate;
    }
    return "\u2026";
}

}  // namespace attn_viz
