#include "byte_level.hpp"

#include <array>
#include <unordered_map>

#include "text_codecs.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

// bytes_to_unicode() of GPT-2's encoder.py: the printable ranges '!'..'~', '¡'..'¬' and '®'..'ÿ'
// stand for themselves; the other 68 bytes take U+0100, U+0101, ... in byte order.
struct ByteAlphabet {
    std::array<char32_t, 256> code_point_of_byte{};
    std::unordered_map<char32_t, unsigned char> byte_of_code_point;

    ByteAlphabet() {
        char32_t next_free = 0x100;
        for (int b = 0; b < 256; ++b) {
            const bool prints_as_itself =
                (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            code_point_of_byte[b] = prints_as_itself ? static_cast<char32_t>(b) : next_free++;
            byte_of_code_point[code_point_of_byte[b]] = static_cast<unsigned char>(b);
        }
    }
};

const ByteAlphabet& alphabet() {
    static const ByteAlphabet instance;
    return instance;
}

}  // namespace

std::string byte_level_encode(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) out += encode_utf8(alphabet().code_point_of_byte[b]);
    return out;
}

std::string byte_level_decode(std::string_view text) {
    std::string out;
    for (char32_t c : decode_utf8(text)) {
        const auto byte = alphabet().byte_of_code_point.find(c);
        if (byte != alphabet().byte_of_code_point.end())
            out += static_cast<char>(byte->second);
        else
            out += encode_utf8(c);
    }
    return out;
}

std::optional<unsigned char> byte_fallback_byte(std::string_view token) {
    if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return std::nullopt;
    const int high = token[3] == '+' ? 0 : hex_digit_value(token[3]), low = hex_digit_value(token[4]);
    if (high < 0 || low < 0) return std::nullopt;
    return static_cast<unsigned char>(high * 16 + low);
}

}  // namespace attn_viz
