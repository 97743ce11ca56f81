// Named tensors a loader can ask for, converted to float32 on demand: one safetensors file, a
// Hugging Face checkpoint sharded over several (safetensors_shards.hpp), or a GGUF file (gguf.hpp).
// The layout presets and the model loaders read through it, so they do not care which container
// holds a checkpoint or how it is split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "error.hpp"
#include "tensor.hpp"

namespace attn_viz {

// Rows [begin, begin + count) of a matrix, read into *out (TensorSource::load_row_ranges).
struct RowRange {
    int64_t begin = 0, count = 0;
    Tensor* out = nullptr;
};

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
    // Throws Error(bad_input) naming the file and tensor when load(name) would refuse the tensor's
    // element type (a GGUF quantization attn-viz cannot decode), without decoding it; nothing for
    // containers whose types were all checked when opened.
    virtual void check_element_type(const std::string& name) const {}
    // Each range of rows of the matrix `name` ([rows, cols], its shape checked by the caller) into
    // its `out`: [count, cols] as stored, or transposed [cols, count] (x W of a weight stored
    // [out, in]); the values load() gives. By default the tensor is loaded once and cut; a GGUF
    // file decodes each range alone into the memory `out` holds (GgufFile::load_rows), so that a
    // streamed model's blocks after the first allocate nothing.
    virtual void load_row_ranges(const std::string& name, const std::vector<RowRange>& ranges, RowLayout layout) const;
};

// Throws Error(bad_input) naming the file unless `source` holds `name` with `shape` and an
// element type it can load; converts nothing (a streamed model checks its blocks so up front).
inline void check_of_shape(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape) {
    if (!source.contains(name)) fail_input(source.path(), fmt::format("has no tensor \"{}\"", name));
    if (source.shape(name) != shape)
        fail_input(source.path(), fmt::format("tensor \"{}\" has shape {}, expected {}", name,
                                              shape_string(source.shape(name)), shape_string(shape)));
    source.check_element_type(name);
}

// The tensor `name` of `source`, checked by check_of_shape before it is converted.
inline Tensor load_of_shape(const TensorSource& source, const std::string& name, const std::vector<int64_t>& shape) {
    check_of_shape(source, name, shape);
    return source.load(name);
}

}  // namespace attn_viz
