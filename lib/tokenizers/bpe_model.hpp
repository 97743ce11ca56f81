// Byte-pair encoding with ranked merges, as Hugging Face tokenizers' BPE model: a word starts as
// its characters and the adjacent pair whose merge ranks first is merged until no pair has a
// merge. GPT-2 family vocabularies spell bytes in the byte-level alphabet (byte_level.hpp);
// SentencePiece-style ones (Llama 2, Mistral) fall back to "<0xNN>" byte tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attn_viz {

class BpeModel {
public:
    struct Options {
        std::optional<int> unk_id;   // the token of characters outside the vocabulary, if any
        bool fuse_unk = false;       // consecutive unknown characters become one unknown token
        bool byte_fallback = false;  // unknown characters become their "<0xNN>" byte tokens
        bool ignore_merges = false;  // a word that is a token already is taken whole (Llama 3)
    };

    // vocab: token text -> id; merges: pairs in rank order. Every merge's two parts and their
    // concatenation must be tokens. Throws Error(bad_input) naming `where` otherwise.
    BpeModel(std::unordered_map<std::string, int> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
             const Options& options, const std::string& where);

    // Appends the ids of one pre-tokenized word. Throws Error(bad_input) naming the character when
    // it is outside the vocabulary and there is neither an unknown token nor a byte fallback.
    void encode_word(const std::string& word, std::vector<int>& ids) const;

    const std::unordered_map<std::string, int>& vocab() const { return vocab_; }

private:
    struct Merge {
        int rank;
        int merged_id;
    };
    static uint64_t pair_key(int left, int right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }
    void initial_symbols(const std::string& word, std::vector<int>& symbols) const;

    std::unordered_map<std::string, int> vocab_;
    std::unordered_map<uint64_t, Merge> merges_;
    Options options_;
    std::string where_;
    int byte_token_[256];  // "<0xNN>" ids when byte_fallback (-1 where absent)
};

}  // namespace attn_viz
