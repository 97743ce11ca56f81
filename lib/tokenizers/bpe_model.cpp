#include "bpe_model.hpp"

#include <queue>
#include <tuple>

#include <fmt/format.h>

#include "error.hpp"
#include "utf8.hpp"

namespace attn_viz {

BpeModel::BpeModel(std::unordered_map<std::string, int> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, const Options& options,
                   const std::string& where)
    : vocab_(std::move(vocab)), options_(options), where_(where) {
    // Step 1: each merge as (left id, right id) -> (rank, merged id), every part a token.
    merges_.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [left, right] = merges[rank];
        const auto l = vocab_.find(left), r = vocab_.find(right), m = vocab_.find(left + right);
        if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end())
            fail_input(where,
                       fmt::format("merge {} (\"{}\" + \"{}\") joins text that is not in the vocabulary", rank,
                                   escape_invalid_utf8(left.substr(0, 40)), escape_invalid_utf8(right.substr(0, 40))));
        merges_.try_emplace(pair_key(l->second, r->second), Merge{static_cast<int>(rank), m->second});
    }
    // Step 2: the byte tokens a fallback needs.
    for (int b = 0; b < 256; ++b) {
        const auto found = vocab_.find(byte_token_name(static_cast<unsigned char>(b)));
        byte_token_[b] = found == vocab_.end() ? -1 : found->second;
    }
}

void BpeModel::initial_symbols(const std::string& word, std::vector<int>& symbols) const {
    bool previous_unknown = false;
    for (size_t i = 0; i < word.size();) {
        const size_t length = std::min(utf8_sequence_length(static_cast<unsigned char>(word[i])), word.size() - i);
        const std::string character = word.substr(i, length);
        i += length;
        if (const auto found = vocab_.find(character); found != vocab_.end()) {
            symbols.push_back(found->second);
            previous_unknown = false;
            continue;
        }
        if (options_.byte_fallback) {
            bool all_bytes = true;
            for (unsigned char b : character) all_bytes = all_bytes && byte_token_[b] >= 0;
            if (all_bytes) {
                for (unsigned char b : character) symbols.push_back(byte_token_[b]);
                previous_unknown = false;
                continue;
            }
        }
        if (!options_.unk_id)
            fail_input(where_, fmt::format("the character \"{}\" is not in the vocabulary, which has no unknown token",
                                           escape_invalid_utf8(character)));
        if (!(options_.fuse_unk && previous_unknown)) symbols.push_back(*options_.unk_id);
        previous_unknown = true;
    }
}

void BpeModel::encode_word(const std::string& word, std::vector<int>& ids) const {
    if (word.empty()) return;
    if (options_.ignore_merges)
        if (const auto whole = vocab_.find(word); whole != vocab_.end()) {
            ids.push_back(whole->second);
            return;
        }
    // Step 1: the word's characters as a doubly linked list of symbols.
    std::vector<int> symbol;
    initial_symbols(word, symbol);
    const int n = static_cast<int>(symbol.size());
    std::vector<int> prev(n), next(n);
    for (int i = 0; i < n; ++i) prev[i] = i - 1, next[i] = i + 1 < n ? i + 1 : -1;

    // Step 2: candidate merges by (rank, position of the left symbol), lowest first, as HF does.
    // A candidate is stale once either symbol changed; it records both ids to tell.
    using Candidate = std::tuple<int, int, int, int>;  // rank, left index, left id, right id
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    auto consider = [&](int left) {
        if (left < 0 || next[left] < 0) return;
        const auto merge = merges_.find(pair_key(symbol[left], symbol[next[left]]));
        if (merge != merges_.end()) queue.emplace(merge->second.rank, left, symbol[left], symbol[next[left]]);
    };
    for (int i = 0; i + 1 < n; ++i) consider(i);

    // Step 3: merge until no adjacent pair has a merge.
    while (!queue.empty()) {
        const auto [rank, left, left_id, right_id] = queue.top();
        queue.pop();
        const int right = next[left];
        if (symbol[left] != left_id || right < 0 || symbol[right] != right_id) continue;
        symbol[left] = merges_.at(pair_key(left_id, right_id)).merged_id;
        symbol[right] = -1;
        next[left] = next[right];
        if (next[right] >= 0) prev[next[right]] = left;
        consider(prev[left]);
        consider(left);
    }
    for (int i = 0; i >= 0 && n > 0; i = next[i]) ids.push_back(symbol[i]);
}

}  // namespace attn_viz
