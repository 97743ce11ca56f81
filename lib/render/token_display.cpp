// Readable token labels (see token_display.hpp for the rules).
#include "token_display.hpp"

#include "font.hpp"
#include "text_codecs.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

const char* const visible_space = "\u2423";
const char* const newline_mark = "\u21B5";
const char* const tab_mark = "\u21E5";

// "<0xNN>" at position i of points -> the byte, or -1.
int byte_token_at(const std::u32string& points, size_t i) {
    if (i + 6 > points.size() || points[i] != '<' || points[i + 1] != '0' || points[i + 2] != 'x' ||
        points[i + 5] != '>')
        return -1;
    const int high = hex_digit_value(points[i + 3]), low = hex_digit_value(points[i + 4]);
    return high < 0 || low < 0 ? -1 : high * 16 + low;
}

std::string show_byte(int byte) {
    if (byte == '\n') return newline_mark;
    if (byte == '\t') return tab_mark;
    if (byte == ' ') return visible_space;
    if (byte > 0x20 && byte < 0x7F) return std::string(1, static_cast<char>(byte));
    return byte_token_name(static_cast<unsigned char>(byte));
}

}  // namespace

std::string display_token(const std::string& token) {
    if (token.empty()) return "\u2205";
    const std::u32string points = decode_utf8(token);
    std::string out;
    for (size_t i = 0; i < points.size(); ++i) {
        const char32_t c = points[i];
        const int byte = byte_token_at(points, i);
        if (byte >= 0) {
            out += show_byte(byte);
            i += 5;
        } else if (c == 0x0120 || c == 0x2581) {
            out += visible_space;
        } else if (c == 0x010A) {
            out += newline_mark;
        } else if (c == 0x0109) {
            out += tab_mark;
        } else if (c < 0x80) {
            out += show_byte(static_cast<int>(c));
        } else {
            out += encode_utf8(c);
        }
    }
    return out;
}

}  // namespace attn_viz
