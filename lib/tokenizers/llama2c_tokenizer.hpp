// llama2.c's tokenizer.bin (a SentencePiece BPE vocabulary with scores; GGUF's "llama" tokenizer
// is the same vocabulary) and its encoder and decoder, matching run.c's encode()/decode(): dummy-prefix space, UTF-8
// code points with <0xNN> byte fallback, then greedy highest-score merges. A GGUF vocabulary brings its own BOS, EOS,
// whether BOS is added and whether the dummy prefix is (Gemma's: BOS 2, EOS 1, no prefix).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn_viz {

// The special ids and the encoder's choices of a SentencePiece vocabulary (defaults: llama2.c's).
struct SentencePieceSpecials {
    int bos = 1, eos = 2;
    bool add_bos = true;           // the model's encode puts BOS first (tokenizer.ggml.add_bos_token)
    bool add_space_prefix = true;  // SentencePiece's dummy prefix (tokenizer.ggml.add_space_prefix)
};

class Llama2cTokenizer {
public:
    static constexpr int bos_id = 1;  // llama2.c's BOS and EOS (run.c's), the defaults of SentencePieceSpecials
    static constexpr int eos_id = 2;

    // Reads every record of the file; `expected_vocab_size` > 0 (the model's vocab) must match
    // the count. Validates lengths against the file and that BOS (1) and EOS (2) are tokens;
    // throws Error(bad_input) naming it.
    explicit Llama2cTokenizer(const std::string& path, int64_t expected_vocab_size = 0);
    // A vocabulary read elsewhere (a GGUF file's tokenizer.ggml.tokens and .scores, with "\u2581"
    // already mapped to " "); `source` names it in errors. Sizes must match, and BOS and EOS be tokens.
    Llama2cTokenizer(const std::string& source, std::vector<std::string> pieces, std::vector<float> scores,
                     const SentencePieceSpecials& specials = {});

    int vocab_size() const { return static_cast<int>(pieces_.size()); }
    const SentencePieceSpecials& specials() const { return specials_; }
    // The raw piece of a token ("<0x0A>" for byte tokens); throws Error(bad_input) when out of range.
    const std::string& piece(int id) const;
    float score(int id) const { return scores_.at(static_cast<size_t>(id)); }
    // The first id past the vocabulary's leading BOS, EOS and pieces in angle brackets, which is how
    // SentencePiece writes its unknown, control and byte pieces (<unk> <s> </s> <0x00>..<0xFF>: 259
    // in llama2.c's, whose BOS and EOS are "\n<s>\n" and "\n</s>\n", and Llama 2's); vocab_size() when
    // every piece is one.
    int first_ordinary_id() const;

    // Token ids of `text`, optionally with BOS first and EOS last; the dummy prefix " " first
    // when specials().add_space_prefix. Throws Error(bad_input) when the vocabulary lacks the " "
    // prefix piece or a needed byte token.
    std::vector<int> encode(const std::string& text, bool bos, bool eos) const;

    // A lower bound on encode(text, bos, eos).size() without encoding: the pieces of the ids
    // spell BOS's piece, the dummy prefix and the text (a byte token's piece is longer than its byte), and
    // none is longer than the longest piece.
    int64_t min_token_count(const std::string& text, bool bos, bool eos) const;

    // The bytes of token `id` following token `prev`: byte tokens become their byte, and a piece
    // right after BOS loses its leading space (the dummy prefix; not without one). Not necessarily UTF-8 on its own.
    std::string decode_piece(int prev, int id) const;

    // Concatenated decode_piece over `ids` (BOS and EOS print nothing; the first token has no
    // previous), with bytes that do not form UTF-8 escaped as "\xNN" (escape_invalid_utf8).
    std::string decode(const std::vector<int>& ids) const;

    // One short label per token for heatmap axes: BOS and EOS their piece when it is "<...>"
    // (Gemma's "<bos>"), else "<s>" and "</s>" (llama2.c's are "\n<s>\n"), a byte token its byte
    // when printable ASCII (else its "<0xNN>" piece), any other token its piece, with bytes that
    // are not UTF-8 escaped as "\xNN".
    std::vector<std::string> labels(const std::vector<int>& ids) const;

private:
    int lookup(const std::string& piece) const;  // -1 when absent
    // Merges adjacent tokens into the best-scoring piece their concatenation is until none is.
    void merge_pairs(std::vector<int>& tokens) const;
    void index_pieces();  // checks BOS and EOS are tokens; fills ids_, byte_ids_ and longest_piece_bytes_

    std::string path_;
    SentencePieceSpecials specials_;
    std::vector<std::string> pieces_;
    std::vector<float> scores_;
    std::unordered_map<std::string, int> ids_;  // first id of each piece
    std::array<int, 256> byte_ids_{};           // the <0xNN> token of each byte (llama2.c's 3 + byte), -1 when absent
    size_t longest_piece_bytes_ = 0;
};

}  // namespace attn_viz
