// UTF-8 encoding and decoding of token text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attn_viz {

// UTF-8 -> code points. Invalid or truncated sequences, overlong forms and surrogates decode as
// U+FFFD, one per offending byte.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(char32_t code_point);

// Any byte string as valid UTF-8: well-formed sequences are kept as they are and every byte that
// is not part of one (a stray 0xFF, a truncated or overlong sequence, an encoded surrogate)
// becomes the four characters "\xNN" (lower-case hex), so it stays visible and distinct.
// Applied where text from files enters the program (token labels), so every output is valid.
std::string escape_invalid_utf8(std::string_view bytes);

// The byte length of the UTF-8 sequence that `lead` starts (1 for ASCII and for a stray
// continuation byte, which tokenizers' inputs cannot hold: they check their text is UTF-8).
inline size_t utf8_sequence_length(unsigned char lead) {
    return lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
}

// The spelling of a byte-fallback token in SentencePiece vocabularies: "<0xNN>", upper-case hex.
std::string byte_token_name(unsigned char byte);

}  // namespace attn_viz
