// Tokens as a user names them on a command line (--target, --patch-metric logit-diff:A,B): by id
// ("262"), or by text, a JSON string ("\" ball\"") as attn-viz tokenize, the CSVs and the
// pictures show tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_tokenizer.hpp"

namespace attn_viz {

// The id `reference` names: a whole number as it is (below `vocab_size`), or a quoted text as
// the token `tokenizer` labels with exactly that text (ModelTokenizer::labels: " Once" is
// SentencePiece's "▁Once"; of several so labelled, a byte token and a piece, the one the text
// encodes to), else as the one token the text encodes to without special tokens.
// Error(usage) otherwise, naming the reference and what it is ("\" ball\" is 2 tokens, not one:
// it encodes to 268 \" b\", 388 \"all\""); without a `tokenizer` a text is refused.
int token_reference_id(const std::string& reference, const ModelTokenizer* tokenizer, int64_t vocab_size);

// `text` split at its commas outside quoted texts ("\"a,b\", 3" -> "\"a,b\"", "3"; spaces outside
// them dropped); a quote inside a quoted text is escaped as JSON escapes it (\").
std::vector<std::string> split_token_references(const std::string& text);

// How titles and findings name a token: "token 262 ' ball'", or "token 262" without a label.
std::string token_words(int id, const std::string& label);

}  // namespace attn_viz
