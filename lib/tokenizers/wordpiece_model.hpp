// WordPiece (BERT): a word becomes the longest vocabulary prefix, then the longest "##"-prefixed
// continuation from where it ended, and so on; a word with no such split, or longer than
// `max_input_chars_per_word` characters, becomes the unknown token.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace attn_viz {

class WordPieceModel {
public:
    struct Options {
        std::string continuing_subword_prefix = "##";
        int max_input_chars_per_word = 100;
    };

    // Throws Error(bad_input) naming `where` when `unk_token` is not in the vocabulary.
    WordPieceModel(std::unordered_map<std::string, int> vocab, const std::string& unk_token, const Options& options,
                   const std::string& where);

    // Appends the ids of one pre-tokenized word.
    void encode_word(const std::string& word, std::vector<int>& ids) const;

    const std::unordered_map<std::string, int>& vocab() const { return vocab_; }
    const std::string& continuing_subword_prefix() const { return options_.continuing_subword_prefix; }

private:
    std::unordered_map<std::string, int> vocab_;
    int unk_id_;
    Options options_;
};

}  // namespace attn_viz
