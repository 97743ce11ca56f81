// Escaping text for XML/HTML and encoding bytes as base64, for the SVG and HTML outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn_viz {

// Escapes &, <, >, " and ' for XML/HTML text and attributes.
std::string xml_escape(const std::string& text);

// Standard base64 (RFC 4648, with padding).
std::string base64_encode(const uint8_t* data, size_t size);

}  // namespace attn_viz
