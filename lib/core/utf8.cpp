#include "utf8.hpp"

namespace attn_viz {

namespace {

constexpr char32_t replacement_character = 0xFFFD;

// The well-formed UTF-8 sequence starting at text[i]: its length (1..4) and code point, or
// length 0 when text[i] does not start one.
struct Utf8Sequence {
    size_t length = 0;
    char32_t code = 0;
};

Utf8Sequence sequence_at(std::string_view text, size_t i) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    char32_t code = 0;
    char32_t minimum = 0;
    if (lead < 0x80) {
        length = 1;
        code = lead;
    } else if ((lead & 0xE0) == 0xC0) {
        length = 2;
        code = lead & 0x1F;
        minimum = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
        length = 3;
        code = lead & 0x0F;
        minimum = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
        length = 4;
        code = lead & 0x07;
        minimum = 0x10000;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
        const auto next = static_cast<unsigned char>(text[i + k]);
        valid = (next & 0xC0) == 0x80;
        code = (code << 6) | (next & 0x3F);
    }
    valid = valid && code >= minimum && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF);
    return valid ? Utf8Sequence{length, code} : Utf8Sequence{};
}

}  // namespace

std::u32string decode_utf8(std::string_view text) {
    std::u32string out;
    for (size_t i = 0; i < text.size();) {
        const Utf8Sequence s = sequence_at(text, i);
        out.push_back(s.length > 0 ? s.code : replacement_character);
        i += s.length > 0 ? s.length : 1;
    }
    return out;
}

std::string escape_invalid_utf8(std::string_view bytes) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size());
    for (size_t i = 0; i < bytes.size();) {
        const size_t length = sequence_at(bytes, i).length;
        if (length > 0) {
            out.append(bytes.substr(i, length));
            i += length;
        } else {
            const auto byte = static_cast<unsigned char>(bytes[i++]);
            out += {'\\', 'x', hex[byte >> 4], hex[byte & 0xF]};
        }
    }
    return out;
}

std::string encode_utf8(char32_t c) {
    std::string out;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
}

std::string byte_token_name(unsigned char byte) {
    static constexpr char hex[] = "0123456789ABCDEF";
    return std::string{'<', '0', 'x', hex[byte >> 4], hex[byte & 0xF], '>'};
}

}  // namespace attn_viz
