// llama2.c tokenizer loading, encoding and decoding.
#include "llama2c_tokenizer.hpp"

#include <algorithm>
#include <cstring>
#include <queue>

#include <fmt/format.h>

#include "error.hpp"
#include "file_kind.hpp"
#include "mapped_file.hpp"
#include "text_codecs.hpp"
#include "utf8.hpp"

namespace attn_viz {
namespace {

constexpr int max_piece_bytes = 1 << 16;
constexpr int64_t max_vocab = 1 << 22;

// The byte of a "<0xNN>" piece (as run.c's sscanf("<0x%02hhX>") reads it: one or two hex digits), or -1.
int byte_of_piece(const std::string& piece) {
    if (piece.size() < 4 || piece.compare(0, 3, "<0x") != 0) return -1;
    int value = hex_digit_value(piece[3]);
    if (value < 0) return -1;
    if (piece.size() > 4 && hex_digit_value(piece[4]) >= 0) value = value * 16 + hex_digit_value(piece[4]);
    return value;
}

}  // namespace

Llama2cTokenizer::Llama2cTokenizer(const std::string& path, int64_t expected_vocab_size) : path_(path) {
    MappedFile file(path, "tokenizer");
    refuse_other_file_kind(file.data(), file.size(), path, FileKind::llama2c_tokenizer, "a llama2.c tokenizer");
    const unsigned char* bytes = file.data();
    const size_t size = file.size();

    // Step 1: max_token_length, then records (float score, int32 length, bytes) until the end.
    if (size < 4) fail_input(path, "too short for a llama2.c tokenizer");
    int32_t max_length = 0;
    std::memcpy(&max_length, bytes, 4);
    if (max_length <= 0 || max_length > max_piece_bytes)
        fail_input(path, fmt::format("max_token_length {} is outside 1..{}", max_length, max_piece_bytes));
    size_t at = 4;
    while (at < size) {
        const std::string where = fmt::format("{}: token {}", path, pieces_.size());
        if (size - at < 8) fail_input(where, "record is truncated");
        float score = 0;
        int32_t length = 0;
        std::memcpy(&score, bytes + at, 4);
        std::memcpy(&length, bytes + at + 4, 4);
        at += 8;
        if (length < 0 || length > max_length)
            fail_input(where, fmt::format("length {} is outside 0..max_token_length {}", length, max_length));
        if (static_cast<size_t>(length) > size - at)
            fail_input(where, "piece runs past the end of the file (truncated)");
        if (static_cast<int64_t>(pieces_.size()) >= max_vocab) fail_input(path, "more than 2^22 tokens");
        pieces_.emplace_back(reinterpret_cast<const char*>(bytes + at), static_cast<size_t>(length));
        scores_.push_back(score);
        at += static_cast<size_t>(length);
    }

    // Step 2: the vocabulary must be what the model expects.
    if (pieces_.empty()) fail_input(path, "holds no tokens");
    if (expected_vocab_size > 0 && static_cast<int64_t>(pieces_.size()) != expected_vocab_size)
        fail_input(path, fmt::format("holds {} tokens but the model's vocabulary has {}", pieces_.size(),
                                     expected_vocab_size));
    index_pieces();
}

Llama2cTokenizer::Llama2cTokenizer(const std::string& source, std::vector<std::string> pieces,
                                   std::vector<float> scores, const SentencePieceSpecials& specials)
    : path_(source), specials_(specials), pieces_(std::move(pieces)), scores_(std::move(scores)) {
    if (pieces_.empty()) fail_input(source, "holds no tokens");
    if (pieces_.size() != scores_.size())
        fail_input(source, fmt::format("has {} tokens but {} scores", pieces_.size(), scores_.size()));
    index_pieces();
}

void Llama2cTokenizer::index_pieces() {
    // encode() puts BOS and EOS in by id, and merges over BOS's piece: both must be tokens.
    const auto size = static_cast<int64_t>(pieces_.size());
    if (specials_.bos < 0 || specials_.bos >= size || specials_.eos < 0 || specials_.eos >= size)
        fail_input(path_,
                   fmt::format("holds {} token{}{}{}, EOS {}{}", pieces_.size(), pieces_.size() == 1 ? "" : "s",
                               size < 3 ? "; a llama tokenizer needs at least 3 (<unk>, BOS " : "; it needs its BOS ",
                               specials_.bos, specials_.eos, size < 3 ? ")" : " among them"));
    for (size_t id = 0; id < pieces_.size(); ++id) {
        ids_.emplace(pieces_[id], static_cast<int>(id));
        longest_piece_bytes_ = std::max(longest_piece_bytes_, pieces_[id].size());
    }
    // Byte b falls back to token 3 + b when that token is <0xNN> for b (run.c's convention), else
    // to the token spelled "<0xNN>" (llama.cpp's lookup; Gemma's byte tokens start elsewhere).
    byte_ids_.fill(-1);
    for (int byte = 0; byte < 256; ++byte) {
        if (static_cast<size_t>(byte) + 3 < pieces_.size() &&
            byte_of_piece(pieces_[static_cast<size_t>(byte) + 3]) == byte) {
            byte_ids_[static_cast<size_t>(byte)] = byte + 3;
            continue;
        }
        byte_ids_[static_cast<size_t>(byte)] = lookup(byte_token_name(static_cast<unsigned char>(byte)));
    }
}

int Llama2cTokenizer::first_ordinary_id() const {
    auto in_brackets = [](const std::string& piece) {
        return piece.size() >= 3 && piece.front() == '<' && piece.back() == '>';
    };
    int id = 0;
    while (id < vocab_size() &&
           (id == specials_.bos || id == specials_.eos || in_brackets(pieces_[static_cast<size_t>(id)])))
        ++id;
    return id;
}

const std::string& Llama2cTokenizer::piece(int id) const {
    if (id < 0 || id >= vocab_size())
        fail_input(path_, fmt::format("token id {} is outside the vocabulary (0..{})", id, vocab_size() - 1));
    return pieces_[static_cast<size_t>(id)];
}

int Llama2cTokenizer::lookup(const std::string& piece) const {
    auto it = ids_.find(piece);
    return it == ids_.end() ? -1 : it->second;
}

std::vector<int> Llama2cTokenizer::encode(const std::string& text, bool bos, bool eos) const {
    std::vector<int> tokens;
    if (bos) tokens.push_back(specials_.bos);

    // Step 1: the dummy prefix (SentencePiece's add_dummy_prefix) when there is any text.
    if (!text.empty() && specials_.add_space_prefix) {
        const int space = lookup(" ");
        if (space < 0) fail_input(path_, "vocabulary has no \" \" piece for the dummy prefix");
        tokens.push_back(space);
    }

    // Step 2: one token per UTF-8 code point (at most 4 bytes, as run.c groups them), else its bytes.
    std::string code_point;
    for (size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if ((c & 0xC0) != 0x80) code_point.clear();
        code_point += static_cast<char>(c);
        const bool continues = i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80;
        if (continues && code_point.size() < 4) continue;
        const int id = lookup(code_point);
        if (id >= 0) {
            tokens.push_back(id);
        } else {
            for (unsigned char byte : code_point) {  // byte fallback: <0x00> is token 3 in llama2.c's vocabularies
                const int byte_id = byte_ids_[byte];
                if (byte_id < 0)
                    fail_input(path_, fmt::format("vocabulary of {} tokens has no byte token for byte {} of the text "
                                                  "(neither token {} nor any other is its <0xNN>)",
                                                  vocab_size(), byte, byte + 3));
                tokens.push_back(byte_id);
            }
        }
        code_point.clear();
    }

    // Step 3: the merges (like run.c, BOS takes part).
    merge_pairs(tokens);
    if (eos) tokens.push_back(specials_.eos);
    return tokens;
}

int64_t Llama2cTokenizer::min_token_count(const std::string& text, bool bos, bool eos) const {
    const size_t prefix = specials_.add_space_prefix ? 1 : 0;
    const size_t spelled =
        (bos ? pieces_[static_cast<size_t>(specials_.bos)].size() : 0) + (text.empty() ? 0 : prefix + text.size());
    const size_t longest = std::max<size_t>(longest_piece_bytes_, 1);
    const int64_t merged = static_cast<int64_t>((spelled + longest - 1) / longest);
    return std::max<int64_t>(merged, bos ? 1 : 0) + (eos ? 1 : 0);
}

// run.c's loop: repeatedly merge the adjacent pair whose concatenation is the best-scoring piece
// (score above -1e10; the leftmost pair on ties) until no pair is a piece. Rescanning every pair
// after each merge is quadratic in the text, so (as llama.cpp's llm_tokenizer_spm) the candidate
// pairs wait in a priority queue, best score first and leftmost on ties, and a merge queues only
// the two pairs it creates. Tokens live in a linked list over their first positions, so a token's
// position orders it as in the text; an entry whose tokens have changed since is skipped.
void Llama2cTokenizer::merge_pairs(std::vector<int>& tokens) const {
    struct Candidate {
        float score;
        size_t left, right;  // positions of the pair's tokens
        int left_id, right_id, merged_id;
        bool operator<(const Candidate& other) const {  // the queue's top is the largest: best, then leftmost
            return score != other.score ? score < other.score : left > other.left;
        }
    };
    constexpr size_t none = static_cast<size_t>(-1);
    const size_t n = tokens.size();
    std::vector<size_t> next(n), prev(n);
    for (size_t i = 0; i < n; ++i) next[i] = i + 1 < n ? i + 1 : none, prev[i] = i > 0 ? i - 1 : none;
    std::vector<bool> merged_away(n, false);
    std::priority_queue<Candidate> queue;
    const auto consider = [&](size_t left, size_t right) {
        if (left == none || right == none) return;
        const int id = lookup(pieces_[static_cast<size_t>(tokens[left])] + pieces_[static_cast<size_t>(tokens[right])]);
        if (id >= 0 && scores_[static_cast<size_t>(id)] > -1e10f)  // NaN scores never merge, as in run.c's comparison
            queue.push({scores_[static_cast<size_t>(id)], left, right, tokens[left], tokens[right], id});
    };
    for (size_t i = 0; i + 1 < n; ++i) consider(i, i + 1);
    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        if (merged_away[c.left] || merged_away[c.right] || next[c.left] != c.right || tokens[c.left] != c.left_id ||
            tokens[c.right] != c.right_id)
            continue;  // stale: a merge has changed one of its tokens
        tokens[c.left] = c.merged_id;
        merged_away[c.right] = true;
        next[c.left] = next[c.right];
        if (next[c.left] != none) prev[next[c.left]] = c.left;
        consider(prev[c.left], c.left);
        consider(c.left, next[c.left]);
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i)
        if (!merged_away[i]) tokens[kept++] = tokens[i];
    tokens.resize(kept);
}

std::string Llama2cTokenizer::decode_piece(int prev, int id) const {
    const std::string& text = piece(id);
    const int byte = byte_of_piece(text);
    if (byte >= 0) return std::string(1, static_cast<char>(byte));
    if (prev == specials_.bos && specials_.add_space_prefix && !text.empty() && text[0] == ' ') return text.substr(1);
    return text;
}

std::string Llama2cTokenizer::decode(const std::vector<int>& ids) const {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] == specials_.bos || ids[i] == specials_.eos) continue;
        text += decode_piece(i > 0 ? ids[i - 1] : -1, ids[i]);
    }
    return escape_invalid_utf8(text);  // after joining: byte tokens may form one character together
}

std::vector<std::string> Llama2cTokenizer::labels(const std::vector<int>& ids) const {
    std::vector<std::string> result;
    for (int id : ids) {
        const std::string& text = piece(id);
        const int byte = byte_of_piece(text);
        const bool bracketed =
            text.size() > 2 && text.front() == '<' && text.back() == '>';  // "<bos>", not llama2.c's "\n<s>\n"
        if (id == specials_.bos)
            result.push_back(bracketed ? text : "<s>");
        else if (id == specials_.eos)
            result.push_back(bracketed ? text : "</s>");
        else if (byte >= 0x20 && byte < 0x7f)
            result.push_back(std::string(1, static_cast<char>(byte)));
        else
            result.push_back(escape_invalid_utf8(text));
    }
    return result;
}

}  // namespace attn_viz
