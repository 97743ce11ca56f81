// What a front end says it opens: every Hugging Face model_type and GGUF architecture the readers
// take, from the family table and the other readers' lists (for --model's help, messages, Python).
#pragma once

#include <string>
#include <vector>

namespace attn_viz {

// The config.json model_types a folder may have: the decoder families', then GPT-2, GPT-NeoX and
// BERT's, then the encoder-decoders'.
std::vector<std::string> supported_model_types();

// The GGUF architectures a file may have: the decoder families', then the other readers'.
std::vector<std::string> supported_gguf_architectures();

// "a, b or c".
std::string listed_with_or(const std::vector<std::string>& names);

}  // namespace attn_viz
