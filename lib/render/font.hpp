// Text for the pictures: UTF-8 decoding and TrueType rasterisation with stb_truetype, using
// DejaVu Sans (Debian package fonts-dejavu-core) found at run time at ATTN_VIZ_FONT_PATH.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "raster_image.hpp"

namespace attn_viz {

// A rendered line of text: coverage in [0, 255], [height, width], baseline row from the top.
struct TextMask {
    int width = 0;
    int height = 0;
    int baseline = 0;
    std::vector<uint8_t> alpha;
};

enum class TextDirection {
    horizontal,  // left to right
    upward,      // rotated 90 degrees counter-clockwise: reads bottom to top
};

class Font {
public:
    // Loads a TrueType file; throws Error(io, "<path>: ...") naming the Debian package if missing.
    explicit Font(const std::string& path);
    ~Font();
    Font(const Font&) = delete;
    Font& operator=(const Font&) = delete;

    // DejaVu Sans from ATTN_VIZ_FONT_PATH, loaded once per process (thread-safe); const methods
    // may be called from several threads at once.
    static const Font& default_font();

    bool has_glyph(char32_t code_point) const;
    int text_width(std::string_view utf8, float pixel_height) const;
    int line_height(float pixel_height) const;
    int baseline(float pixel_height) const;  // rows from the top of a line to its baseline
    // The em size (CSS/SVG font-size) whose line is pixel_height tall.
    float em_size(float pixel_height) const;
    // Glyphs missing from the font are drawn as a box outline.
    TextMask render(std::string_view utf8, float pixel_height) const;

private:
    struct Glyph {
        int glyph_index;  // 0 = missing
        float x;
        float advance;
    };
    std::vector<Glyph> layout(const std::u32string& text, float scale, float pixel_height) const;
    // Kerning in font units between two glyphs (of these characters); cached for ASCII pairs.
    int kerning(char32_t first_char, int first_glyph, char32_t second_char, int second_glyph) const;

    std::vector<unsigned char> bytes_;
    struct Info;
    std::unique_ptr<Info> info_;
};

// Draws a mask with its top-left corner (after rotation, for upward text) at (x, y).
void draw_text_mask(RasterImage& image, const TextMask& mask, int x, int y, Rgb color, TextDirection direction);

// A piece of text and its bounding box in picture pixels. Upward text is rotated 90 degrees
// counter-clockwise and reads bottom to top.
struct TextPlacement {
    std::string text;
    int x = 0, y = 0, width = 0, height = 0;
    float pixel_height = 12.0f;
    TextDirection direction = TextDirection::horizontal;
};

// Renders a placed text into its box.
void draw_placed_text(RasterImage& image, const TextPlacement& placement, Rgb color = text_color);

// Shortens text with a trailing "…" until it is at most max_width pixels wide.
std::string fit_text(const Font& font, const std::string& text, float pixel_height, int max_width);

}  // namespace attn_viz
