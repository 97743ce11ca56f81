// The steps of a Hugging Face tokenizer.json around its model, each parsed from its JSON object:
// normalizers (text -> text), pre-tokenizers (text -> words) and decoders (token -> text). Only
// the types the supported model families use are known; any other type is refused by name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn_viz {

// A normalizer: the text of one segment (the text between added tokens) in its normal form.
// null JSON gives the identity. Types: Sequence, Prepend, Replace, BertNormalizer, Lowercase,
// NFD, NFC, NFKC, NFKD, StripAccents, Strip, Precompiled (precompiled_charsmap.hpp).
// The normalized text is budgeted as the text given to tokenize is (check_tokenizing_memory), at
// tokenize_bytes_per_normalized_byte a byte: a step whose text would be longer than
// memory_budget / that throws Error(bad_input, "<where>: normalizer <type>: ...",
// Remedy::raise_memory_budget), as soon as it grows past it for Replace and Precompiled (which can
// make any amount of text of a character), after the step for the others.
using Normalizer = std::function<std::string(std::string)>;
Normalizer parse_normalizer(const nlohmann::json& spec, const std::string& where, uint64_t memory_budget);

// A pre-tokenizer: one segment's words (it gets the segment as one word and may split it
// further and rewrite each word, as ByteLevel does). `first_segment` is true for the segment
// at the very start of the text (Metaspace's prepend_scheme "first"). Types: Sequence,
// ByteLevel, Split, Metaspace, BertPreTokenizer, Whitespace, WhitespaceSplit, Digits, Punctuation.
using PreTokenizer = std::function<std::vector<std::string>(std::vector<std::string> words, bool first_segment)>;
PreTokenizer parse_pre_tokenizer(const nlohmann::json& spec, const std::string& where);

// A decoder, split in what applies to each token on its own (the text a token label shows) and
// what applies once to the joined text. Types: Sequence, ByteLevel, Replace, ByteFallback, Fuse,
// Strip, Metaspace, WordPiece.
struct TokenDecoder {
    std::vector<std::function<std::string(std::string)>> per_token;
    std::string word_prefix;       // WordPiece: tokens without it start a new word ("##")
    bool cleanup = false;          // WordPiece: " ." -> "." and the like
    int strip_leading_spaces = 0;  // Strip (or Metaspace's first-token space): from the joined text

    // The text of `tokens` joined, as the tokenizer's decode() gives it.
    std::string decode(const std::vector<std::string>& tokens) const;
    // The text of one token on its own (the word prefix kept, so labels show continuations).
    std::string token_text(const std::string& token) const;
};
TokenDecoder parse_decoder(const nlohmann::json& spec, const std::string& where);

}  // namespace attn_viz
