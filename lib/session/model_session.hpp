// A whole model as every front end opens it (the CLI's `model` and `compare`, Python's Model): its
// files read and its kind decided once (a decoder or an encoder run by WholeModel, or an
// encoder-decoder folder, bart or t5, run by Seq2SeqModel), then its weights and tokenizer loaded
// with the backend every run of it goes through, and its inputs (a text, a text pair, token ids or
// the induction test) encoded as the model's tokenizer encodes them.
//
//   ModelSession session(path, limits);       // step 1: the files, the kind (nothing large read)
//   ... refuse what the kind does not take ...
//   session.load(tokenizer_path);              // step 2: the weights, the tokenizer
//   const ModelInputIds in = session.encode(input, names);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_limits.hpp"
#include "model_files.hpp"
#include "model_tokenizer.hpp"
#include "onednn_backend.hpp"
#include "seq2seq_model.hpp"
#include "whole_model.hpp"

namespace attn_viz {

// What a model reads: exactly one of a text (with a text pair's second text), token ids, or the
// induction test (BOS if the tokenizer has one, then `induction` random tokens repeated twice).
struct ModelInput {
    std::optional<std::string> text, text_pair;
    std::optional<std::vector<int>> ids;
    int64_t induction = 0;
    uint64_t seed = 0;      // the induction test's random tokens
    bool truncate = false;  // a text longer than the model's context is cut to it (not a pair, not ids)
};

// What the front end calls each input in messages ("--text" or "text").
struct ModelInputNames {
    std::string text, text_pair, ids;
};

// The ids the induction test's random tokens are drawn from, [first, end): from the tokenizer's
// first ordinary token (past the leading special and byte tokens: 259 in a Llama 2
// vocabulary, 0 in GPT-2's), below both the model's and the tokenizer's vocabulary size (Pythia's
// embedding has spare rows).
struct InductionRange {
    int64_t first = 0, end = 0;
};

// An input encoded: its ids, their token types (a text pair's, for a model that tells types
// apart; else empty: every token of type 0), where a pair's second text starts (-1 without one)
// and the ids a cut text had before (0 when it was not cut).
struct ModelInputIds {
    std::vector<int> ids;
    std::vector<int> token_types;
    int64_t sentence_b_start = -1;
    int64_t original_tokens = 0;
};

class ModelSession {
public:
    // Step 1: the files at `path` (open_model_files) and the model's kind; `limits` bound every
    // read of this session; `blocks`: whether a decoder's blocks are read one at a time when a
    // pass needs them (streamed) or all at once (held; a GGUF decoder always streams).
    ModelSession(const std::string& path, const LoadLimits& limits = {}, BlockLoading blocks = BlockLoading::held);

    const std::string& path() const { return files_.path; }
    // A Hugging Face folder's model_type, else "" (for messages that name it).
    const std::string& model_type() const { return files_.config.model_type; }
    bool encoder_decoder() const { return encoder_decoder_; }

    // Step 2: the weights (the whole model, or an encoder-decoder's three stacks) and the
    // tokenizer at `tokenizer_path`, or the model's own when it is "" (read_model_tokenizer):
    // load_weights then load_tokenizer (a model compared with another reads only its weights).
    void load(const std::string& tokenizer_path);
    void load_weights();
    void load_tokenizer(const std::string& tokenizer_path);

    OnednnBackend& backend() { return *backend_; }
    // The decoder or encoder (load first; Error(usage) for an encoder-decoder: refuse_encoder_decoder).
    WholeModel& model() const;
    // The encoder-decoder (load first; Error(usage) for any other model).
    Seq2SeqModel& seq2seq() const;
    // The tokenizer (load_tokenizer first).
    const ModelTokenizer& tokenizer() const { return *tokenizer_; }
    int64_t vocab_size() const;
    int64_t max_tokens() const;
    // "PATH (llama, 5 layers x 8 heads)": the model as reports name it.
    std::string description() const;
    // The model's shape as a JSON object: architecture, n_layers (the encoder's for an
    // encoder-decoder, with n_decoder_layers), n_heads, n_kv_heads, dim, head_dim, vocab_size, max_tokens.
    nlohmann::json shape() const;

    // `input` encoded (text: within the model's context, cut when input.truncate, else refused;
    // ids as given, unchecked: check_tokens). Error(usage) naming names.text and names.ids unless
    // exactly one of text, ids or the induction test is given; an empty text is refused by name.
    ModelInputIds encode(const ModelInput& input, const ModelInputNames& names) const;
    // Error(bad_input) naming `what` when an id is outside the vocabulary or there are more ids
    // than the model's context.
    void check_tokens(const std::vector<int>& ids, const std::string& what) const;
    InductionRange induction_range() const;
    // stats.json's keys about the input: the text pair and where it starts with the token types
    // run, how many tokens a cut text had, and how the induction test made its ids.
    nlohmann::json input_stats(const ModelInput& input, const ModelInputIds& ids) const;

private:
    LoadLimits limits_;
    ModelFiles files_;
    bool encoder_decoder_ = false;
    std::unique_ptr<OnednnBackend> backend_;  // outlives the models
    std::unique_ptr<WholeModel> model_;
    std::unique_ptr<Seq2SeqModel> seq2seq_;
    std::unique_ptr<ModelTokenizer> tokenizer_;
};

}  // namespace attn_viz
