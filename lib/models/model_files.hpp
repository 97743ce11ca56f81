// What a model path is, decided in one place by its content, with the header that says which
// family it holds parsed once (a folder's config.json, a GGUF file's metadata and tensor table)
// and shared by everything that reads the model: its weights, its tokenizer, compare.
#pragma once

#include <memory>
#include <string>

#include "gguf.hpp"
#include "hf_config.hpp"
#include "load_limits.hpp"
#include "model_weights.hpp"

namespace attn_viz {

enum class ModelFormat {
    hf_folder,  // a Hugging Face folder: config.json, safetensors (sharded or not), tokenizer files
    gguf,       // a GGUF file (weights and tokenizer inside)
    llama2c,    // a llama2.c version-0 checkpoint (its tokenizer.bin is a separate file)
};

struct ModelFiles {
    std::string path;
    ModelFormat format = ModelFormat::llama2c;
    HfConfig config;                       // hf_folder: its config.json; empty otherwise
    std::shared_ptr<const GgufFile> gguf;  // gguf: the parsed file, mapped; null otherwise
    // A folder's Llama-like decoder: its blocks read whole, or streamed from the mapped
    // safetensors (one block in memory at a time). A GGUF decoder's blocks always stream.
    BlockLoading blocks = BlockLoading::held;
};

// `path` as a model: a folder (its config.json parsed now: Error(io) when it has none,
// Error(bad_input) naming it when it is bad), a file that starts with GGUF's magic (its header and
// tensor table parsed and checked now), else a llama2.c checkpoint (checked when its weights are
// read, which refuses another kind of file by what it is). A file of a model folder (config.json,
// tokenizer.json, *.safetensors, ...) is Error(bad_input) saying to pass the folder.
ModelFiles open_model_files(const std::string& path, const LoadLimits& limits = {});

// Whether `path` holds a whole model rather than one layer's weights, by its content: a folder, a
// GGUF file or a llama2.c checkpoint header.
bool is_model_path(const std::string& path);

// The model's weights as float32, by its format and family: a folder's model_type (llama, mistral,
// qwen2, qwen3, gemma, gemma2, gemma3_text, phi3: family_table.hpp, blocks as files.blocks says; gpt2, gpt_neox, bert:
// hf_transformer_checkpoint.hpp; another type is Error(bad_input) naming config.json and the supported ones), a GGUF
// file's general.architecture (llama: blocks streamed from the mapped file; gpt2, gptneox, bert: read whole), a
// llama2.c checkpoint.
ModelWeights read_model_weights(const ModelFiles& files, const LoadLimits& limits = {});

}  // namespace attn_viz
