// A Llama-style model in any format attn-viz reads: a Hugging Face folder (llama, mistral, qwen2;
// tokenizer.json inside), or a file told apart by its first bytes: a GGUF file (llama
// architecture, tokenizer inside) or a llama2.c version-0 checkpoint (tokenizer in a separate
// tokenizer.bin).
#pragma once

#include <string>

#include "llama2c_tokenizer.hpp"
#include "load_limits.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// The model's weights as float32: a GGUF model's blocks streamed (read_gguf_llama_streaming), a
// Hugging Face folder's (read_hf_llama_folder) or a llama2.c checkpoint's all read.
ModelWeights read_llama_model(const std::string& path, const LoadLimits& limits = {});

// The tokenizer: `tokenizer_path` when given (a llama2.c tokenizer.bin, or a GGUF file's own),
// else the GGUF model's own; a llama2.c checkpoint without a tokenizer file is Error(bad_input)
// naming it. `vocab_size` > 0 must be the tokenizer's size.
Llama2cTokenizer read_llama_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int64_t vocab_size,
                                      const LoadLimits& limits = {});

}  // namespace attn_viz
