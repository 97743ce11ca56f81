// Tensors inside JSON documents: either inline nested arrays of numbers, or a reference
// {"npy": "file.npy"} to a NumPy file beside the JSON document.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load_limits.hpp"
#include "tensor.hpp"

namespace attn_viz {

struct JsonTensorSource {
    std::string document;  // path of the JSON file, for messages
    std::string base_dir;  // where {"npy": ...} references are resolved
    LoadLimits limits;     // for {"npy": ...} files and non-finite values
};

// Reads `value` as a tensor of rank `expected.size()`; dimensions given as -1 are taken from the
// data, others must match. `name` is the key, for messages ("w.json: W_Q row 3 has 5 numbers,
// expected 8"). Rejects ragged rows, non-numbers and (unless source.limits allow them) non-finite
// values.
Tensor read_json_tensor(const nlohmann::json& value, const std::vector<int64_t>& expected, const std::string& name,
                        const JsonTensorSource& source);

}  // namespace attn_viz
