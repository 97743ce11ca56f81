// SentencePiece's normalization rules as Hugging Face's "Precompiled" normalizer carries them
// (tokenizer.json's base64 `precompiled_charsmap`, T5's and many multilingual models' nmt_nfkc):
//   [u32 little-endian: the trie's size in bytes] [the trie: u32 units of a Darts double array,
//    byte labels, each leaf's value the offset of its replacement] [replacements, each ending in NUL]
// applied as the tokenizers library does (its Precompiled normalizer over the spm_precompiled
// crate): each grapheme cluster shorter than 6 bytes is replaced whole when the trie matches a
// prefix of it, otherwise each code point on its own; text the trie does not match stays.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn_viz {

class PrecompiledCharsmap {
public:
    // `blob`: the decoded charsmap. Throws Error(bad_input) naming `where` when its sizes do not
    // add up; a trie that leads outside its array or its replacements fails the same way when used.
    PrecompiledCharsmap(std::string blob, const std::string& where);

    // `text` normalized; it stops as soon as the result is longer than `max_bytes` (a replacement
    // may be any length), returning that much, which the caller refuses.
    std::string normalize(const std::string& text, size_t max_bytes) const;

private:
    // The replacement of the shortest key that is a prefix of `chunk`, if any.
    std::optional<std::string_view> replacement(std::string_view chunk) const;
    uint32_t unit(size_t position) const;

    std::vector<uint32_t> trie_;
    std::string replacements_;
    std::string where_;
};

}  // namespace attn_viz
