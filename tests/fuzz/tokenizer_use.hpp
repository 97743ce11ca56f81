// What the tokenizer fuzz targets (and the replay of their findings, tests/models/
// test_reliability_fuzz.cpp) do with a tokenizer that loaded: encode texts with it, then decode
// and label the ids. The texts include long runs of one character (where a Split pattern that
// backtracks catastrophically takes exponential time, and a quadratic merge loop seconds) and,
// for llama tokenizers, a text spelled from the vocabulary's own first pieces (so a vocabulary of
// one or two tokens encodes something it holds rather than failing on a missing character).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"

namespace attn_viz_fuzz {

// Runs of one character each, with a different character after them.
inline std::string long_runs() {
    std::string text;
    for (const char* run : {"a", " ", "7", "\n", "'", "\xc3\xa9"}) {
        for (int i = 0; i < 300; ++i) text += run;
        text += "!x";
    }
    return text;
}

// Every id inside the vocabulary, and each one labelled.
template <typename Tokenizer>
void decode_and_label(const Tokenizer& tokenizer, const std::vector<int>& ids) {
    for (int id : ids)
        if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();
    tokenizer.decode(ids);
    if (tokenizer.labels(ids).size() != ids.size()) __builtin_trap();
}

inline void use_llama_tokenizer(const attn_viz::Llama2cTokenizer& tokenizer) {
    std::string own_pieces;
    for (int id = 0; id < std::min(tokenizer.vocab_size(), 64); ++id) own_pieces += tokenizer.piece(id);
    for (const std::string& text :
         {std::string("The theta abab \xc3\xa9\n"), std::string(" "), own_pieces, long_runs()}) {
        ATTN_VIZ_FUZZ_EXPECT_CLEAN(decode_and_label(tokenizer, tokenizer.encode(text, true, true)));
    }
}

inline void use_hf_tokenizer(const attn_viz::HfTokenizer& tokenizer) {
    for (const std::string& text :
         {std::string("Hello, world! The caf\xc3\xa9's 123 \xe2\x98\x83 <s> [CLS] abab\n\t x"), long_runs()})
        for (bool special : {false, true})
            ATTN_VIZ_FUZZ_EXPECT_CLEAN(decode_and_label(tokenizer, tokenizer.encode(text, special)));
}

}  // namespace attn_viz_fuzz
