// The tokenizer that goes with a model (model_files.hpp), or the one given for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "load_limits.hpp"
#include "model_files.hpp"
#include "model_tokenizer.hpp"

namespace attn_viz {

// The tokenizer at `path`: a Hugging Face folder, tokenizer.json or legacy vocabulary file (such
// as vocab.txt), a GGUF file's own (a vocabulary-only file too: "llama" SentencePiece, "gpt2"
// byte-level BPE or "bert" WordPiece, gguf_tokenizer.hpp), else a llama2.c tokenizer.bin.
// `vocab_size` > 0 must match a llama2.c or GGUF tokenizer's size (0: a GGUF model's own rows) and
// bound a Hugging Face tokenizer's (more tokens than the model's vocabulary: Error(bad_input)
// naming both sizes).
std::unique_ptr<ModelTokenizer> read_tokenizer_file(const std::string& path, int64_t vocab_size,
                                                    const LoadLimits& limits = {});

// `tokenizer_path` when given (read_tokenizer_file), else the model's own: a folder's tokenizer
// files, a GGUF file's metadata (from the file `model` already parsed); a llama2.c checkpoint has
// none (Error(bad_input) naming it: its tokenizer.bin is a separate file). `vocab_size` as above.
std::unique_ptr<ModelTokenizer> read_model_tokenizer(const ModelFiles& model, const std::string& tokenizer_path,
                                                     int64_t vocab_size, const LoadLimits& limits = {});

}  // namespace attn_viz
