#include "json_tensor.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "error.hpp"
#include "finite.hpp"
#include "memory_budget.hpp"
#include "npy.hpp"

namespace attn_viz {
namespace {

// Infers the shape of nested arrays by following the first element at each depth.
std::vector<int64_t> inferred_shape(const nlohmann::json& value, size_t rank) {
    std::vector<int64_t> shape;
    const nlohmann::json* v = &value;
    for (size_t d = 0; d < rank && v->is_array(); ++d) {
        shape.push_back(static_cast<int64_t>(v->size()));
        if (v->empty()) break;
        v = &(*v)[0];
    }
    return shape;
}

// Copies nested arrays into `out`, checking every row's length against `shape`; with `out` null
// it only checks (run before allocating, so a short document cannot claim a huge tensor).
void flatten(const nlohmann::json& value, const std::vector<int64_t>& shape, size_t depth, std::vector<int64_t>& index,
             float*& out, const std::string& name, const JsonTensorSource& source) {
    const std::string& where = source.document;
    // The array's name in a message, made only when there is one to give.
    const auto here = [&] { return index.empty() ? name : fmt::format("{} row {}", name, shape_string(index)); };
    if (!value.is_array()) fail_input(where, fmt::format("{} is not an array", here()));
    if (static_cast<int64_t>(value.size()) != shape[depth])
        fail_input(where, fmt::format("{} has {} entries, expected {}", here(), value.size(), shape[depth]));
    for (size_t i = 0; i < value.size(); ++i) {
        const nlohmann::json& item = value[i];
        if (depth + 1 < shape.size()) {
            index.push_back(static_cast<int64_t>(i));
            flatten(item, shape, depth + 1, index, out, name, source);
            index.pop_back();
            continue;
        }
        if (!item.is_number()) {
            index.push_back(static_cast<int64_t>(i));
            fail_input(where, fmt::format("{}{} is not a number", name, shape_string(index)));
        }
        const double d = item.get<double>();
        if ((!std::isfinite(d) || std::fabs(d) > 3.4e38) && !source.limits.allow_nonfinite) {
            index.push_back(static_cast<int64_t>(i));
            fail_input(where, fmt::format("{}{} is not a finite float32 value", name, shape_string(index)),
                       Remedy::allow_nonfinite);
        }
        if (out) *out++ = narrow_to_float(d);
    }
}

}  // namespace

Tensor read_json_tensor(const nlohmann::json& value, const std::vector<int64_t>& expected, const std::string& name,
                        const JsonTensorSource& source) {
    const std::string& where = source.document;
    Tensor t;
    if (value.is_object()) {
        // A reference to a binary file beside the document.
        if (!value.contains("npy") || !value["npy"].is_string())
            fail_input(where, fmt::format("{} must be an array of numbers or {{\"npy\": \"file.npy\"}}", name));
        const std::string file = (std::filesystem::path(source.base_dir) / value["npy"].get<std::string>()).string();
        try {
            t = read_npy(file, source.limits, fmt::format("tensor {} of {}", name, where));
        } catch (const Error& e) {
            if (e.kind() != ErrorKind::io) throw;
            fail_input(where, fmt::format("{} refers to an unreadable file: {}", name, e.what()));
        }
        require_finite(t, name, file, source.limits);
    } else {
        std::vector<int64_t> shape = inferred_shape(value, expected.size());
        if (shape.size() != expected.size())
            fail_input(where, fmt::format("{} must be a {}-dimensional array of numbers", name, expected.size()));
        for (size_t d = 0; d < expected.size(); ++d)
            if (expected[d] >= 0) shape[d] = expected[d];
        std::vector<int64_t> index;
        float* out = nullptr;
        flatten(value, shape, 0, index, out, name, source);  // validate everything first
        const std::string what = fmt::format("{}: {}", where, name);
        check_memory_elements(static_cast<uint64_t>(element_count(shape, what)), sizeof(float),
                              source.limits.memory_budget, fmt::format("{} of shape {}", what, shape_string(shape)));
        t = Tensor::uninitialized(shape, what);  // every element is written below
        out = t.ptr();
        flatten(value, shape, 0, index, out, name, source);
    }
    if (t.rank() != static_cast<int>(expected.size()))
        fail_input(where, fmt::format("{} has shape {}, expected {} dimensions", name, shape_string(t.shape),
                                      expected.size()));
    for (size_t d = 0; d < expected.size(); ++d)
        if (expected[d] >= 0 && t.shape[d] != expected[d])
            fail_input(where, fmt::format("{} has shape {}, expected {} (-1 = any)", name, shape_string(t.shape),
                                          shape_string(expected)));
    return t;
}

}  // namespace attn_viz
