#include "model_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "error.hpp"
#include "file_kind.hpp"
#include "gguf_llama.hpp"
#include "gguf_transformer.hpp"
#include "hf_llama_checkpoint.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "input_open.hpp"
#include "llama2c_checkpoint.hpp"
#include "model_folder_files.hpp"

namespace attn_viz {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// A folder whose weights are PyTorch pickles only (pytorch_model.bin, or its shards' index) is
// refused with how to convert it: attn-viz reads safetensors (a pickle runs code when loaded).
void refuse_pickled_weights(const std::string& folder) {
    const std::filesystem::path dir(folder);
    std::error_code ec;
    const auto has = [&](const char* name) { return std::filesystem::exists(dir / name, ec); };
    if (has("model.safetensors") || has("model.safetensors.index.json")) return;
    for (const char* pickle : {"pytorch_model.bin", "pytorch_model.bin.index.json"})
        if (has(pickle))
            fail_input(folder,
                       fmt::format("holds its weights as a PyTorch pickle ({}) and no model.safetensors; attn-viz "
                                   "reads safetensors only (loading a pickle runs code). Convert it once with "
                                   "transformers: python3 -c \"import transformers as t; "
                                   "t.AutoModel.from_pretrained('{}').save_pretrained('{}')\" (save_pretrained "
                                   "writes model.safetensors)",
                                   pickle, folder, folder));
}

}  // namespace

ModelFiles open_model_files(const std::string& path, const LoadLimits& limits) {
    ModelFiles files;
    files.path = path;
    if (std::filesystem::is_directory(path)) {
        files.format = ModelFormat::hf_folder;
        files.config = read_hf_config((std::filesystem::path(path) / "config.json").string(), hf_model_types());
        refuse_pickled_weights(path);
        return files;
    }
    refuse_model_folder_file(path);
    if (is_gguf_file(path)) {
        files.format = ModelFormat::gguf;
        files.gguf = std::make_shared<const GgufFile>(path, limits);
    }
    return files;
}

bool is_model_path(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return true;
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    // A probe of the first bytes, opened once: GGUF's magic is its first 4, a llama2.c
    // checkpoint's header its first 28.
    unsigned char header[28];
    const UniqueFd fd = open_input_file(path, "");
    const ssize_t got = ::read(fd.get(), header, sizeof header);
    if (got >= 4 && std::memcmp(header, "GGUF", 4) == 0) return true;
    return got == static_cast<ssize_t>(sizeof header) &&
           sniff_file_kind(header, sizeof header) == FileKind::llama2c_checkpoint;
}

ModelWeights read_model_weights(const ModelFiles& files, const LoadLimits& limits) {
    switch (files.format) {
        case ModelFormat::hf_folder:
            // Every type not of the Llama family goes to read_hf_transformer_folder, whose error
            // lists all supported ones.
            if (contains(hf_llama_model_types(), files.config.model_type))
                return read_hf_llama_folder(files.path, files.config, limits, files.blocks);
            return read_hf_transformer_folder(files.path, files.config, limits);
        case ModelFormat::gguf:
            if (contains(gguf_transformer_architectures(), files.gguf->get_string("general.architecture").value_or("")))
                return read_gguf_transformer(*files.gguf);
            return read_gguf_llama_streaming(files.gguf);
        case ModelFormat::llama2c:
            return read_llama2c_checkpoint(files.path, limits);
    }
    throw Error(ErrorKind::internal, fmt::format("{}: unknown model format", files.path));
}

}  // namespace attn_viz
