// Escaping text for XML/HTML and base64, for the SVG and HTML outputs and the binary blobs JSON files
// carry; hexadecimal digits, for the "<0xNN>" byte tokens of vocabularies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace attn_viz {

// Escapes &, <, >, " and ' for XML/HTML text and attributes.
std::string xml_escape(const std::string& text);

// Standard base64 (RFC 4648, with padding).
std::string base64_encode(const uint8_t* data, size_t size);

// The bytes of standard base64 text (padding optional); nullopt when `text` is not base64.
std::optional<std::string> base64_decode(std::string_view text);

// The value of the hexadecimal digit `c` (0-9, a-f, A-F), or -1.
int hex_digit_value(char32_t c);

}  // namespace attn_viz
