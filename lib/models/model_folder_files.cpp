#include "model_folder_files.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

void refuse_model_folder_file(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return;
    const fs::path file(path);
    const std::string name = file.filename().string(), extension = file.extension().string();
    if (extension != ".json" && extension != ".safetensors" && name != "merges.txt" && name != "vocab.txt" &&
        name != "tokenizer.model")
        return;
    const fs::path folder = file.parent_path().empty() ? fs::path(".") : file.parent_path();
    fail_input(path, fmt::format("is the {} of a model folder, not a model: pass the folder that holds it ({})", name,
                                 folder.string()));
}

}  // namespace attn_viz
