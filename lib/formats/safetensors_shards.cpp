#include "safetensors_shards.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "error.hpp"
#include "json_input.hpp"
#include "utf8.hpp"

namespace attn_viz {

namespace fs = std::filesystem;

SafetensorsShards::SafetensorsShards(const std::string& folder, const LoadLimits& limits) {
    const fs::path dir(folder), single = dir / "model.safetensors", index = dir / "model.safetensors.index.json";
    // Step 1: one file, or the index's map of tensor -> shard file.
    std::map<std::string, std::string> file_of_tensor;
    if (fs::exists(single) || !fs::exists(index)) {
        path_ = single.string();
        shards_.push_back(std::make_unique<SafetensorsFile>(path_, limits));
        for (const std::string& name : shards_[0]->names()) shard_of_.emplace(name, 0);
        return;
    }
    path_ = index.string();
    const nlohmann::json doc = read_json_file(path_, "checkpoint index", limits);
    if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object())
        fail_input(path_, "no \"weight_map\" object of tensor name -> shard file");
    for (const auto& [tensor, file] : doc["weight_map"].items()) {
        if (!file.is_string())
            fail_input(path_, fmt::format("the shard of tensor '{}' is not a file name", escape_invalid_utf8(tensor)));
        const std::string name = file.get<std::string>();
        // A shard is a plain file of this folder, never a path out of it.
        if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
            fail_input(path_, fmt::format("shard \"{}\" of tensor '{}' is not a file name in the folder",
                                          escape_invalid_utf8(name), escape_invalid_utf8(tensor)));
        file_of_tensor.emplace(tensor, name);
    }
    // Step 2: each shard opened once; every tensor must be where the index says.
    std::map<std::string, size_t> opened;
    for (const auto& [tensor, file] : file_of_tensor) {
        auto [slot, is_new] = opened.emplace(file, shards_.size());
        if (is_new) shards_.push_back(std::make_unique<SafetensorsFile>((dir / file).string(), limits));
        if (!shards_[slot->second]->contains(tensor))
            fail_input(path_, fmt::format("says tensor '{}' is in {}, which does not hold it",
                                          escape_invalid_utf8(tensor), file));
        shard_of_.emplace(tensor, slot->second);
    }
}

std::vector<std::string> SafetensorsShards::names() const {
    std::vector<std::string> out;
    out.reserve(shard_of_.size());
    for (const auto& entry : shard_of_) out.push_back(entry.first);
    std::sort(out.begin(), out.end());
    return out;
}

const SafetensorsFile& SafetensorsShards::shard(const std::string& name) const {
    const auto found = shard_of_.find(name);
    if (found == shard_of_.end()) fail_input(path_, fmt::format("has no tensor \"{}\"", escape_invalid_utf8(name)));
    return *shards_[found->second];
}

}  // namespace attn_viz
