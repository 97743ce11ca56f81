// Tokenizers of Hugging Face model folders, read from tokenizer.json (byte-level BPE: GPT-2,
// Pythia, Llama 3, Qwen2; SentencePiece-style BPE with byte fallback: Llama 2, TinyLlama, Mistral;
// WordPiece: BERT; SentencePiece Unigram: T5, ALBERT, XLNet, mT5) or from the legacy files: vocab.json + merges.txt (or
// OpenAI's encoder.json + vocab.bpe) for GPT-2-style BPE, vocab.txt for BERT. tokenizer_config.json beside it decides
// add_bos_token / add_eos_token and clean_up_tokenization_spaces and names the BOS and EOS tokens.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "load_limits.hpp"

namespace attn_viz {

// A model's input as a tokenizer encodes it: the ids and, one per id, its token type (a text
// pair's segment A 0, segment B 1 for BERT: what transformers' tokenizer(a, b) returns as
// token_type_ids), or no types where every token is of type 0 (a single text).
struct EncodedText {
    std::vector<int> ids;
    std::vector<int> type_ids;    // empty, or one per id
    int64_t second_start = -1;    // a pair's: where the second text's ids start (BertViz's sentence_b_start)
    int64_t original_tokens = 0;  // cut to a model's context (encode_for_context): the ids before; 0 if uncut
};

class HfTokenizer {
public:
    // `path`: a model folder, or a tokenizer.json file. Every file read is validated (ids in
    // range, merges of known tokens, known step types); throws Error(bad_input) naming the file.
    // The files are read within `limits`, and encode() holds the normalized text to what its
    // memory budget allows tokenizing (parse_normalizer).
    static HfTokenizer load(const std::string& path, const LoadLimits& limits = {});
    // The same from documents already in memory: `tokenizer` as tokenizer.json, `config` as
    // tokenizer_config.json (an object; bos_token, eos_token, add_bos_token, add_eos_token), as
    // another format's metadata translates to them (gguf_tokenizer.hpp), within the default memory
    // budget. Errors name `where`.
    static HfTokenizer from_json(const nlohmann::json& tokenizer, const nlohmann::json& config,
                                 const std::string& where);

    ~HfTokenizer();
    HfTokenizer(HfTokenizer&&) noexcept;
    HfTokenizer& operator=(HfTokenizer&&) noexcept;

    // What kind of tokenizer this is, for messages: "byte-level BPE", "BPE", "WordPiece", "Unigram".
    const std::string& kind() const;
    // One more than the largest token id.
    int vocab_size() const;
    std::optional<int> bos_id() const;
    std::optional<int> eos_id() const;
    // The first id past the vocabulary's leading special tokens and byte-fallback tokens
    // ("<0x00>".."<0xFF>"): 0 in GPT-2's, 1 in BERT's ([PAD] first), 259 in a Llama
    // tokenizer.json's; vocab_size() when every id is one.
    int first_ordinary_id() const;
    // The id of a token by its text in the vocabulary (or an added token's content).
    std::optional<int> token_id(const std::string& token) const;

    // Ids of `text` (UTF-8, else Error(bad_input)), with the special tokens the folder's template
    // adds ([CLS] ... [SEP], <s> ...) when `add_special_tokens`, as HF's encode() does.
    std::vector<int> encode(const std::string& text, bool add_special_tokens) const;

    // Ids of the text pair (`first`, `second`) with each token's type, as HF's encode(first,
    // second) gives them: the post-processor's pair template ([CLS] A [SEP] B [SEP] with B's part
    // of type 1 for BERT; <s> A </s></s> B </s>, all of type 0, for RoBERTa), or A then B (types
    // 0 and 1) where the tokenizer has no post-processor.
    EncodedText encode_pair(const std::string& first, const std::string& second) const;
    // The special token the pair template puts right after the first text ("[SEP]", "</s>"), as
    // written; empty when it puts none.
    std::string pair_separator() const;
    // The special tokens the post-processor puts before a text ([CLS], <s>) and after one or
    // between a pair's two ([SEP], </s>); empty where it puts none.
    std::vector<int> start_ids() const;
    std::vector<int> separator_ids() const;
    // The text of `ids`, special tokens skipped (HF's decode with skip_special_tokens), bytes that
    // are not UTF-8 escaped as "\xNN". Throws Error(bad_input) for an id out of range.
    std::string decode(const std::vector<int>& ids) const;

    // One label per token for heatmap axes: its text on its own ("Ġthe" -> " the", "▁Once" ->
    // " Once", "<0x0A>" -> "\n"; WordPiece continuations keep "##"), special tokens as written.
    std::vector<std::string> labels(const std::vector<int>& ids) const;

    struct Impl;  // the loaded pipeline (hf_tokenizer.cpp)

private:
    explicit HfTokenizer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace attn_viz
