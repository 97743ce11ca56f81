// How a token string is shown in labels and tooltips: tokenizer markers made readable.
#pragma once

#include <string>

namespace attn_viz {

// Rules, applied left to right over the token's UTF-8 code points:
//  - "Ġ" (U+0120, GPT-2 byte-level space) and "▁" (U+2581, SentencePiece space) -> "␣" (U+2423),
//    a visible space marker, wherever they occur (so "ĠĠ" is two spaces); a raw space too;
//  - "Ċ" (U+010A), the byte token "<0x0A>" and a raw newline -> "↵";
//  - "ĉ" (U+0109), "<0x09>" and a raw tab -> "⇥";
//  - other "<0xNN>" byte tokens: the byte's character when it is printable ASCII (0x21..0x7E),
//    "␣" for 0x20, otherwise kept as written;
//  - other control characters (U+0000..U+001F, U+007F) -> "<0xNN>";
//  - invalid UTF-8 bytes -> U+FFFD; the empty token -> "∅".
std::string display_token(const std::string& token);

}  // namespace attn_viz
