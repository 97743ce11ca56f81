#include "unigram_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "error.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace {

// The unknown token's cost below the lowest score (SentencePiece's kUnkPenalty).
constexpr double unknown_penalty = 10.0;

}  // namespace

UnigramModel::UnigramModel(const std::vector<std::pair<std::string, double>>& pieces, const Options& options,
                           const std::string& where)
    : options_(options), where_(where) {
    if (pieces.empty()) fail_input(where, "the Unigram vocabulary is empty");
    vocab_.reserve(pieces.size());
    scores_.reserve(pieces.size());
    double lowest = std::numeric_limits<double>::infinity();
    uint64_t piece_bytes = 0;  // bounds the trie's nodes, which it counts in 32 bits
    for (size_t id = 0; id < pieces.size(); ++id) {
        const auto& [text, score] = pieces[id];
        if (!std::isfinite(score)) fail_input(where, fmt::format("piece {} has a score that is not finite", id));
        piece_bytes += text.size();
        if (piece_bytes >= UINT32_MAX) fail_input(where, "the Unigram pieces hold 4 GB or more of text");
        vocab_[text] = static_cast<int>(id);
        trie_.insert(text, static_cast<int>(id));
        scores_.push_back(score);
        lowest = std::min(lowest, score);
    }
    unk_score_ = lowest - unknown_penalty;
    if (options.unk_id && (*options.unk_id < 0 || static_cast<size_t>(*options.unk_id) >= pieces.size()))
        fail_input(where, fmt::format("unk_id {} is not one of the {} pieces", *options.unk_id, pieces.size()));
}

std::vector<std::pair<size_t, size_t>> UnigramModel::best_pieces(const std::string& word) const {
    // best[e]: the best path over word[0, e): its score, where its last piece starts, that piece's id.
    struct Node {
        double score = 0;
        size_t start = std::string::npos;  // npos: no path ends here yet
        int id = -1;
    };
    const size_t n = word.size();
    std::vector<Node> best(n + 1);
    const auto offer = [&](size_t start, size_t end, double score, int id) {
        Node& node = best[end];
        if (node.start == std::string::npos || score > node.score) node = {score, start, id};
    };
    for (size_t start = 0; start < n; start += utf8_sequence_length(static_cast<unsigned char>(word[start]))) {
        const double here = best[start].score;
        const size_t code_point = std::min(utf8_sequence_length(static_cast<unsigned char>(word[start])), n - start);
        bool single_code_point_piece = false;
        trie_.for_each_prefix(std::string_view(word).substr(start), [&](size_t length, int id) {
            offer(start, start + length, here + scores_[id], id);
            single_code_point_piece = single_code_point_piece || length == code_point;
        });
        if (!single_code_point_piece) {
            if (!options_.unk_id)
                fail_input(where_,
                           fmt::format("the character \"{}\" is not in the vocabulary, which has no unknown token",
                                       escape_invalid_utf8(word.substr(start, code_point))));
            offer(start, start + code_point, here + unk_score_, *options_.unk_id);
        }
    }
    // Back from the end; runs of unknown pieces become one.
    std::vector<std::pair<size_t, size_t>> pieces;
    bool after_unknown = false;  // the piece just taken (the next one in the word) is unknown
    for (size_t end = n; end > 0; end = best[end].start) {
        const Node& node = best[end];
        const bool unknown = options_.unk_id && node.id == *options_.unk_id;
        if (unknown && after_unknown)
            pieces.back().first = node.start;
        else
            pieces.emplace_back(node.start, end);
        after_unknown = unknown;
    }
    std::reverse(pieces.begin(), pieces.end());
    return pieces;
}

void UnigramModel::encode_word(const std::string& word, std::vector<int>& ids) const {
    for (const auto& [begin, end] : best_pieces(word)) {
        const std::string piece = word.substr(begin, end - begin);
        if (const auto found = vocab_.find(piece); found != vocab_.end()) {
            ids.push_back(found->second);
            continue;
        }
        if (options_.byte_fallback) {
            std::vector<int> bytes;
            for (const char byte : piece) {
                const auto token = vocab_.find(byte_token_name(static_cast<unsigned char>(byte)));
                if (token == vocab_.end()) break;
                bytes.push_back(token->second);
            }
            if (bytes.size() == piece.size()) {
                ids.insert(ids.end(), bytes.begin(), bytes.end());
                continue;
            }
        }
        ids.push_back(*options_.unk_id);
    }
}

}  // namespace attn_viz
