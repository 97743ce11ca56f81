// A whole model's tokenizer, whichever files it comes from: a llama2.c tokenizer.bin or a GGUF
// model's own (Llama2cTokenizer), or a Hugging Face folder's (HfTokenizer). Model mode, corpus
// mode and compare use only this; model_tokenizer_file.hpp reads a model's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hf_tokenizer.hpp"
#include "llama2c_tokenizer.hpp"
#include "token_role.hpp"

namespace attn_viz {

class ModelTokenizer {
public:
    virtual ~ModelTokenizer() = default;
    // Ids of `text` as the model takes a text: with the BOS (or [CLS] ... [SEP]) its tokenizer adds.
    virtual std::vector<int> encode(const std::string& text) const = 0;
    // Ids of `text` alone, without the special tokens encode() adds (add_special_tokens=False).
    virtual std::vector<int> encode_without_special_tokens(const std::string& text) const = 0;
    // Ids and token types of the text pair (`first`, `second`) as the model's tokenizer encodes a
    // pair (HfTokenizer::encode_pair); Error(usage) for a tokenizer without pairs (llama2.c's).
    virtual EncodedText encode_pair(const std::string& first, const std::string& second) const = 0;
    // The special token between a pair's texts ("[SEP]"), as written; empty without one.
    virtual std::string pair_separator() const = 0;
    // A lower bound on encode(text).size() found without encoding, so an over-long text is refused
    // at once; 0 when the tokenizer has none (a Hugging Face tokenizer's normalizer or unknown
    // token can make any amount of text few tokens).
    virtual int64_t min_token_count(const std::string& text) const = 0;
    // The text of `ids` (special tokens print nothing), bytes that are not UTF-8 as "\xNN".
    virtual std::string decode(const std::vector<int>& ids) const = 0;
    // One label per token for heatmap axes (its text, special tokens as written); an id at or past
    // vocab_size() (a model's vocabulary may be larger) as "<id N>".
    virtual std::vector<std::string> labels(const std::vector<int>& ids) const = 0;
    // One more than the largest id it knows (a model's vocabulary may be larger: Pythia's is padded).
    virtual int vocab_size() const = 0;
    // The first id past the vocabulary's leading special and byte tokens: where random
    // ordinary tokens (the induction test's) start. Llama2cTokenizer's and HfTokenizer's
    // first_ordinary_id say what each skips.
    virtual int first_ordinary_id() const = 0;
    // The token a prompt starts with (BOS); -1 when the tokenizer has none.
    virtual int begin_id() const = 0;
    // The tokens that end a text when a model chooses them (llama2.c: BOS; Hugging Face: EOS).
    virtual std::vector<int> end_ids() const = 0;
    // The special tokens encode() and encode_pair() put before a text ([CLS], <s>, llama2.c's BOS)
    // and after one ([SEP], </s>); empty where there are none.
    virtual std::vector<int> start_ids() const = 0;
    virtual std::vector<int> separator_ids() const = 0;
};

// One role per id: TokenRole::start and ::separator for the tokenizer's start_ids() and
// separator_ids(), ::punctuation for a token whose label (less a WordPiece "##" and surrounding
// white space) is one or more characters all of a Unicode P* category, ::other otherwise.
std::vector<TokenRole> token_roles(const ModelTokenizer& tokenizer, const std::vector<int>& ids);

// Whether `label` is punctuation as token_roles says (",", " ...", "##!", "\u3002"; not "", " ", "a.").
bool is_punctuation_label(const std::string& label);

// tokenizer.encode(text) for a model that takes at most `max_tokens` tokens. More ids are refused
// (Error(bad_input) naming `where` and the sequence length, Remedy::truncate_text: before encoding
// when min_token_count already is, so a long text is refused at once, else after), or with
// `truncate` cut as transformers' truncation=True cuts them: the special tokens the tokenizer adds
// kept (BOS; [CLS] and [SEP]; T5's </s>), the text's last tokens dropped, and `original_tokens`
// set to how many there were.
EncodedText encode_for_context(const ModelTokenizer& tokenizer, const std::string& text, int64_t max_tokens,
                               const std::string& where, bool truncate);
// encode_for_context's ids, refused rather than cut.
std::vector<int> encode_within_context(const ModelTokenizer& tokenizer, const std::string& text, int64_t max_tokens,
                                       const std::string& where);

// tokenizer.encode_pair(first, second) within `max_tokens`, as encode_within_context; errors name
// `where`.
EncodedText encode_pair_within_context(const ModelTokenizer& tokenizer, const std::string& first,
                                       const std::string& second, int64_t max_tokens, const std::string& where);

// The two kinds of tokenizer as a model takes a text: llama2.c's (and a GGUF "llama" vocabulary's)
// with BOS and no EOS, a Hugging Face pipeline's with its post-processor's special tokens.
std::unique_ptr<ModelTokenizer> as_model_tokenizer(Llama2cTokenizer tokenizer);
std::unique_ptr<ModelTokenizer> as_model_tokenizer(HfTokenizer tokenizer);

// Upper bound of the memory that encoding a text and labelling its tokens takes per byte of text
// (ids, labels, the table or JSON line, the encoders' working lists): 55 to 61 measured with
// stories260K's tokenizer.json on 1 and 2 MB lines (docs/reliability.md, memory budget), with margin.
constexpr uint64_t tokenize_bytes_per_text_byte = 80;

// The same per byte of normalized text (what a tokenizer.json's pre-tokenizer and model work on,
// which its normalizer makes of the text): 34 to 41 measured with stories260K's tokenizer.json
// without its normalizer on those lines normalized beforehand (1.5 and 3 MB; its normalizer makes
// 1.46 bytes of a byte of English), with margin. A normalizer may thus make 80 / 50 = 1.6 times
// the longest text the budget allows before the normalized text is refused (parse_normalizer).
constexpr uint64_t tokenize_bytes_per_normalized_byte = 50;

// Throws Error(bad_input, "<where>: tokenizing N bytes of text needs M bytes, more than the
// memory budget ...", Remedy::raise_memory_budget) when a text of `text_bytes` cannot be
// tokenized within `budget`.
void check_tokenizing_memory(uint64_t text_bytes, uint64_t budget, const std::string& where);

}  // namespace attn_viz
