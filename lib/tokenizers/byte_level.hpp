// GPT-2's byte-level alphabet: each of the 256 byte values as one printable code point (bytes that
// print as themselves keep their code point, the rest map to U+0100 upwards: " " -> "Ġ", "\n" ->
// "Ċ"), so a BPE vocabulary of strings covers any byte sequence. Used by GPT-2, Pythia, Llama 3
// and Qwen2 tokenizers (the ByteLevel pre-tokenizer and decoder of tokenizer.json). Also the
// "<0xNN>" tokens of SentencePiece-style vocabularies (the ByteFallback decoder).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace attn_viz {

// Every byte of `bytes` as its code point of the alphabet, UTF-8 encoded.
std::string byte_level_encode(std::string_view bytes);

// The inverse: each code point of the alphabet back to its byte; any other character (an added
// token's text, "<|endoftext|>" pieces are in the alphabet already) is kept as its UTF-8 bytes.
std::string byte_level_decode(std::string_view text);

// The byte a "<0xNN>" token stands for, as the tokenizers library's ByteFallback reads it (six
// bytes; NN through Rust's u8::from_str_radix(NN, 16), which takes two hex digits or '+' and one),
// or nothing for any other token.
std::optional<unsigned char> byte_fallback_byte(std::string_view token);

}  // namespace attn_viz
