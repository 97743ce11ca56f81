// A Hugging Face model folder's weights: model.safetensors, or the shards that
// model.safetensors.index.json maps each tensor to (model-00001-of-00002.safetensors, ...). Every
// shard is memory-mapped and validated when opened; tensors are converted when asked for.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "load_limits.hpp"
#include "safetensors.hpp"
#include "tensor_source.hpp"

namespace attn_viz {

class SafetensorsShards : public TensorSource {
public:
    // Opens the folder's checkpoint. The index must name plain files inside the folder, each of
    // which must hold the tensors the index puts there; throws Error(bad_input) naming the index
    // (or Error(io) naming a shard that cannot be opened).
    SafetensorsShards(const std::string& folder, const LoadLimits& limits = {});

    const std::string& path() const override { return path_; }
    std::vector<std::string> names() const override;
    bool contains(const std::string& name) const override { return shard_of_.count(name) != 0; }
    const std::vector<int64_t>& shape(const std::string& name) const override { return shard(name).shape(name); }
    Tensor load(const std::string& name) const override { return shard(name).load(name); }
    void check_element_type(const std::string& name) const override { shard(name).check_element_type(name); }

private:
    const SafetensorsFile& shard(const std::string& name) const;

    std::string path_;
    std::vector<std::unique_ptr<SafetensorsFile>> shards_;
    std::unordered_map<std::string, size_t> shard_of_;
};

}  // namespace attn_viz
