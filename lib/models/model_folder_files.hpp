// A file of a Hugging Face model folder given where the model belongs (`--model config.json`):
// told apart from the files a model can be (a GGUF file, a llama2.c checkpoint) by its name, so
// the advice is to pass the folder rather than a parse error about the file's contents.
#pragma once

#include <string>

namespace attn_viz {

// Throws Error(bad_input, "<path>: is the tokenizer.json of a model folder, not a model: pass
// the folder that holds it (DIR)") when `path` is a regular file named as a model folder's files
// are: *.json (config.json, tokenizer.json, the shards' index, ...), *.safetensors, merges.txt,
// vocab.txt or tokenizer.model. Does nothing for any other path.
void refuse_model_folder_file(const std::string& path);

}  // namespace attn_viz
