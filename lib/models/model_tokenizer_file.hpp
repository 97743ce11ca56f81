// The tokenizer that goes with a model file or folder, or the one given for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "load_limits.hpp"
#include "model_tokenizer.hpp"

namespace attn_viz {

// The tokenizer of a model file or folder: `tokenizer_path` when given (a Hugging Face folder,
// tokenizer.json or legacy vocabulary file such as vocab.txt; a GGUF file's own tokenizer, from a
// vocabulary-only file too; else a llama2.c tokenizer.bin), else the model's own (a GGUF file's:
// "llama" SentencePiece, "gpt2" byte-level BPE or "bert" WordPiece, gguf_tokenizer.hpp; a Hugging Face folder's). A
// llama2.c checkpoint without a tokenizer is Error(bad_input) naming it; `vocab_size` > 0 must
// match a llama2.c or GGUF tokenizer's size (0: a GGUF model's own) and bound a Hugging Face
// tokenizer's (more tokens than the model's vocabulary: Error(bad_input) naming both sizes).
std::unique_ptr<ModelTokenizer> read_model_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int64_t vocab_size,
                                                     const LoadLimits& limits = {});

}  // namespace attn_viz
