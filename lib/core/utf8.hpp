// UTF-8 encoding and decoding of token text.
#pragma once

#include <string>
#include <string_view>

namespace attn_viz {

// UTF-8 -> code points. Invalid or truncated sequences, overlong forms and surrogates decode as
// U+FFFD, one per offending byte.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(char32_t code_point);

}  // namespace attn_viz
