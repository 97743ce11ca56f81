#include "wordpiece_model.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

// Byte offsets where each UTF-8 character of `word` starts, and word.size() at the end.
std::vector<size_t> character_starts(const std::string& word) {
    std::vector<size_t> starts;
    for (size_t i = 0; i < word.size(); ++i)
        if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) starts.push_back(i);
    starts.push_back(word.size());
    return starts;
}

}  // namespace

WordPieceModel::WordPieceModel(std::unordered_map<std::string, int> vocab, const std::string& unk_token,
                               const Options& options, const std::string& where)
    : vocab_(std::move(vocab)), options_(options) {
    const auto unk = vocab_.find(unk_token);
    if (unk == vocab_.end())
        fail_input(where,
                   fmt::format("the unknown token \"{}\" is not in the vocabulary", escape_invalid_utf8(unk_token)));
    unk_id_ = unk->second;
}

void WordPieceModel::encode_word(const std::string& word, std::vector<int>& ids) const {
    const std::vector<size_t> starts = character_starts(word);
    const size_t characters = starts.size() - 1;
    if (characters == 0) return;
    if (characters > static_cast<size_t>(options_.max_input_chars_per_word)) {
        ids.push_back(unk_id_);
        return;
    }
    // Greedy longest match from each position; the word is unknown as a whole if one fails.
    const size_t first_new = ids.size();
    for (size_t begin = 0; begin < characters;) {
        size_t end = characters;
        int found_id = -1;
        for (; end > begin; --end) {
            const std::string piece = (begin > 0 ? options_.continuing_subword_prefix : "") +
                                      word.substr(starts[begin], starts[end] - starts[begin]);
            if (const auto found = vocab_.find(piece); found != vocab_.end()) {
                found_id = found->second;
                break;
            }
        }
        if (found_id < 0) {
            ids.resize(first_new);
            ids.push_back(unk_id_);
            return;
        }
        ids.push_back(found_id);
        begin = end;
    }
}

}  // namespace attn_viz
