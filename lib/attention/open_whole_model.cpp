// Opening any supported model path as a whole model, by its format and family.
#include <algorithm>
#include <filesystem>

#include "gguf.hpp"
#include "gguf_llama.hpp"
#include "gguf_transformer.hpp"
#include "hf_config.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "llama_model_file.hpp"
#include "whole_model.hpp"

namespace attn_viz {

std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const std::string& path,
                                             const LoadLimits& limits) {
    if (std::filesystem::is_directory(path)) {
        const std::string model_type =
            read_hf_config((std::filesystem::path(path) / "config.json").string()).model_type;
        const std::vector<std::string>& llama_types = hf_llama_model_types();
        // Every other type goes to read_hf_transformer_folder, whose error lists all supported ones.
        if (std::find(llama_types.begin(), llama_types.end(), model_type) == llama_types.end())
            return std::make_unique<WholeModel>(backend, read_hf_transformer_folder(path, limits));
    } else if (is_gguf_file(path)) {
        // GGUF gpt2, gptneox and bert files read whole, as the folders are; llama streams its
        // blocks from the same parsed file.
        const auto file = std::make_shared<const GgufFile>(path, limits);
        const std::vector<std::string>& transformer_types = gguf_transformer_architectures();
        const std::string architecture = file->get_string("general.architecture").value_or("");
        if (std::find(transformer_types.begin(), transformer_types.end(), architecture) != transformer_types.end())
            return std::make_unique<WholeModel>(backend, read_gguf_transformer(*file));
        return std::make_unique<WholeModel>(backend, read_gguf_llama_streaming(file));
    }
    return std::make_unique<WholeModel>(backend, read_llama_model(path, limits));
}

}  // namespace attn_viz
