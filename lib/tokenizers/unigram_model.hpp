// SentencePiece's Unigram model as Hugging Face tokenizers runs it (T5, ALBERT, XLNet, many
// multilingual models): a word becomes the sequence of vocabulary pieces whose summed log
// probabilities (the vocabulary's scores) is largest, found by Viterbi over the word's code
// points. A code point no piece starts with costs the unknown token at (lowest score - 10), and
// consecutive unknown code points become one unknown token (or their "<0xNN>" byte tokens with
// byte_fallback). On equal totals the path whose last piece is longest wins, as there. The pieces
// that start at each position are found in a prefix tree (piece_trie.hpp), as there: a word costs
// its length times the longest match at a position, not times the longest piece's length squared.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "piece_trie.hpp"

namespace attn_viz {

class UnigramModel {
public:
    struct Options {
        std::optional<int> unk_id;
        bool byte_fallback = false;
    };

    // pieces: [text, score] in id order. Throws Error(bad_input) naming `where` when a score is
    // not finite or unk_id is not an id.
    UnigramModel(const std::vector<std::pair<std::string, double>>& pieces, const Options& options,
                 const std::string& where);

    // Appends the ids of one pre-tokenized word. Throws Error(bad_input) naming the character when
    // it is outside the vocabulary and there is neither an unknown token nor a byte fallback.
    void encode_word(const std::string& word, std::vector<int>& ids) const;

    const std::unordered_map<std::string, int>& vocab() const { return vocab_; }

private:
    // The best segmentation of `word` as byte ranges [begin, end), unknown runs fused.
    std::vector<std::pair<size_t, size_t>> best_pieces(const std::string& word) const;

    std::unordered_map<std::string, int> vocab_;  // a text given twice keeps its last id, as there
    PieceTrie trie_;                              // the same pieces and ids, by their bytes
    std::vector<double> scores_;
    double unk_score_ = 0;
    Options options_;
    std::string where_;
};

}  // namespace attn_viz
