// What `attn-viz tokenize` shows: texts (from the command line or an --inputs file) encoded by a
// model's tokenizer, each as a table of ids and token labels or as one JSON line for scripts.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_limits.hpp"
#include "model_tokenizer.hpp"

namespace attn_viz {

struct TokenizedText {
    std::string text;                                     // the text encoded, or the decoded text of given ids
    std::vector<int> ids;                                 // as the model takes them (BOS, [CLS] ... [SEP] included)
    std::vector<std::string> labels;                      // one per id: the token's text on its own
    std::optional<std::string> text_pair = std::nullopt;  // a pair's second text
    std::vector<int> type_ids = {};                       // a pair's token types, one per id (else empty)
    int64_t second_start = -1;                            // a pair's: where the second text's ids start
};

// `text` encoded by `tokenizer`, with the label of each id.
TokenizedText tokenize_text(const ModelTokenizer& tokenizer, const std::string& text);

// The pair (`text`, `text_pair`) encoded by `tokenizer` as a pair, with each id's label and type.
TokenizedText tokenize_pair(const ModelTokenizer& tokenizer, const std::string& text, const std::string& text_pair);

// Given ids (each checked against the vocabulary) with their labels and decoded text.
TokenizedText describe_ids(const ModelTokenizer& tokenizer, const std::vector<int>& ids);

// Each input of the file `path`, in order, through `tokenizer`, handed to `on_text` with where it
// came from ("texts.txt:3"). A ".jsonl" file holds one {"text": "..."} or {"tokens": [ids]} per
// line, as model mode's corpora; any other file one text per line (a trailing "\r" dropped). Blank
// lines are skipped; a {"text": ..., "text_pair": ...} line is encoded as a pair. Throws Error(bad_input) naming the
// file and line for a malformed line, a text that is not UTF-8 or that the tokenizer refuses, or an id outside the
// vocabulary.
void for_each_tokenized_input(const std::string& path, const ModelTokenizer& tokenizer, const LoadLimits& limits,
                              const std::function<void(const TokenizedText&, const std::string& where)>& on_text);

// The text, then one row per token: its position, id and label (quoted, escaped as JSON strings
// are, so spaces and newlines show); a pair's rows add each token's type.
std::string token_table(const TokenizedText& tokenized);

// {"text": ..., "ids": [...], "tokens": [labels]}; a pair's adds "text_pair", "token_type_ids"
// and "sentence_b_start".
nlohmann::json tokenized_json(const TokenizedText& tokenized);

}  // namespace attn_viz
