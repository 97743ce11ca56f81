// Named tensors a loader can ask for, converted to float32 on demand: one safetensors file, or a
// Hugging Face checkpoint sharded over several (safetensors_shards.hpp). The layout presets and
// the model loaders read through it, so they do not care how a checkpoint is split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "error.hpp"
#include "tensor.hpp"

namespace attn_viz {

class TensorSource {
public:
    virtual ~TensorSource() = default;
    // The file to name in messages (the index of a sharded checkpoint).
    virtual const std::string& path() const = 0;
    virtual std::vector<std::string> names() const = 0;  // sorted
    virtual bool contains(const std::string& name) const = 0;
    // Throw Error(bad_input) naming the file when `name` is absent.
    virtual const std::vector<int64_t>& shape(const std::string& name) const = 0;
    virtual Tensor load(const std::string& name) const = 0;
};

// The tensor `name` of `source`, which must have `shape`; throws Error(bad_input) naming the file
// when it is missing or has another shape, before converting it.
inline Tensor load_of_shape(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape) {
    if (!source.contains(name)) fail_input(source.path(), fmt::format("missing tensor '{}'", name));
    if (source.shape(name) != shape)
        fail_input(source.path(), fmt::format("tensor '{}' has shape {}, expected {}", name,
                                              shape_string(source.shape(name)), shape_string(shape)));
    return source.load(name);
}

}  // namespace attn_viz
