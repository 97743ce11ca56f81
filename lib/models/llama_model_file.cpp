// Dispatch on the model file's format.
#include "llama_model_file.hpp"

#include <filesystem>

#include "error.hpp"
#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "gguf_tokenizer.hpp"
#include "hf_llama_checkpoint.hpp"
#include "llama2c_checkpoint.hpp"

namespace attn_viz {

ModelWeights read_llama_model(const std::string& path, const LoadLimits& limits) {
    if (std::filesystem::is_directory(path)) return read_hf_llama_folder(path, limits);
    if (is_gguf_file(path)) return read_gguf_llama_streaming(std::make_shared<const GgufFile>(path, limits));
    return read_llama2c_checkpoint(path, limits);
}

Llama2cTokenizer read_llama_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int64_t vocab_size,
                                      const LoadLimits& limits) {
    const std::string& path = tokenizer_path.empty() ? model_path : tokenizer_path;
    if (is_gguf_file(path)) return read_gguf_llama_tokenizer(GgufFile(path, limits), vocab_size);
    if (!tokenizer_path.empty()) return Llama2cTokenizer(tokenizer_path, vocab_size);
    fail_input(model_path, "is a llama2.c checkpoint, whose tokenizer is a separate file (tokenizer.bin) that was not given");
}

}  // namespace attn_viz
