#include "precompiled_charsmap.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "error.hpp"
#include "unicode_text.hpp"

namespace attn_viz {

namespace {

// The fields of a Darts double-array unit.
bool has_leaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t leaf_value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
size_t offset(uint32_t unit) { return static_cast<size_t>(unit >> 10) << ((unit & (1u << 9)) >> 6); }

uint32_t read_u32_le(const char* bytes) {
    uint32_t value = 0;
    for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
    return value;
}

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string blob, const std::string& where) : where_(where) {
    if (blob.size() < 4)
        fail_input(where, fmt::format("precompiled_charsmap is {} bytes, shorter than its 4-byte header", blob.size()));
    const uint64_t trie_bytes = read_u32_le(blob.data());
    if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > blob.size() - 4)
        fail_input(where,
                   fmt::format("precompiled_charsmap's trie of {} bytes does not fit its {} bytes in whole units",
                               trie_bytes, blob.size()));
    trie_.resize(trie_bytes / 4);
    for (size_t i = 0; i < trie_.size(); ++i) trie_[i] = read_u32_le(blob.data() + 4 + 4 * i);
    replacements_ = blob.substr(4 + trie_bytes);
    if (!is_valid_utf8(replacements_)) fail_input(where, "precompiled_charsmap's replacements are not UTF-8");
}

uint32_t PrecompiledCharsmap::unit(size_t position) const {
    if (position >= trie_.size())
        fail_input(where_, fmt::format("precompiled_charsmap's trie leads to unit {} of {}", position, trie_.size()));
    return trie_[position];
}

std::optional<std::string_view> PrecompiledCharsmap::replacement(std::string_view chunk) const {
    size_t position = offset(unit(0));
    for (const char byte : chunk) {
        const auto c = static_cast<unsigned char>(byte);
        if (c == 0) break;
        position ^= c;
        const uint32_t node = unit(position);
        if (label(node) != c) break;
        position ^= offset(node);
        if (!has_leaf(node)) continue;
        const size_t begin = leaf_value(unit(position));
        if (begin >= replacements_.size())
            fail_input(where_, fmt::format("precompiled_charsmap's replacement offset {} is past its {} bytes", begin,
                                           replacements_.size()));
        const size_t length = strnlen(replacements_.data() + begin, replacements_.size() - begin);
        return std::string_view(replacements_).substr(begin, length);
    }
    return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(const std::string& text, size_t max_bytes) const {
    std::string out;
    out.reserve(std::min(text.size(), max_bytes));
    for (const std::string& cluster : grapheme_clusters(text)) {
        if (out.size() > max_bytes) break;
        if (cluster.size() < 6)
            if (const auto whole = replacement(cluster)) {
                out += *whole;
                continue;
            }
        for (size_t at = 0; at < cluster.size() && out.size() <= max_bytes;) {
            size_t length = 1;  // the code point's UTF-8 length (the text is valid UTF-8)
            while (at + length < cluster.size() && (static_cast<unsigned char>(cluster[at + length]) & 0xC0) == 0x80)
                ++length;
            const std::string_view code_point = std::string_view(cluster).substr(at, length);
            const auto rewritten = replacement(code_point);
            out += rewritten ? *rewritten : code_point;
            at += length;
        }
    }
    return out;
}

}  // namespace attn_viz
