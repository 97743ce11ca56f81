// Dense row-major float32 tensors: the one container the library passes around.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor_allocator.hpp"

namespace attn_viz {

// shape[0] is the slowest-varying axis; data holds product(shape) floats.
struct Tensor {
    std::vector<int64_t> shape;
    std::vector<float, TensorAllocator<float>> data;

    Tensor() = default;
    // Allocates product(shape) zero-initialised floats; refuses (Error bad_input) more than the
    // machine's memory (a sanity bound: loaders and run estimates check LoadLimits' budget).
    explicit Tensor(std::vector<int64_t> shape_);
    // The same without zeroing, for a buffer that is about to be overwritten completely. `what`
    // names it in errors: a loader passes "<file>: <tensor>" so that a shape past the machine's
    // memory is reported against the file.
    static Tensor uninitialized(std::vector<int64_t> shape, const std::string& what = "a tensor");

    int rank() const { return static_cast<int>(shape.size()); }
    int64_t dim(int axis) const { return shape.at(static_cast<size_t>(axis)); }
    int64_t size() const { return static_cast<int64_t>(data.size()); }
    bool empty() const { return data.empty(); }
    float* ptr() { return data.data(); }
    const float* ptr() const { return data.data(); }
};

// How a matrix's rows are laid out when read: as stored ([rows, cols]) or transposed ([cols, rows]).
enum class RowLayout { as_stored, transposed };

// double to float32, values beyond float32's range becoming +-inf (a plain cast of those is
// undefined behaviour); NaN stays NaN.
inline float narrow_to_float(double value) {
    constexpr double largest = 3.4028234663852886e38;
    if (value > largest) return __builtin_huge_valf();
    if (value < -largest) return -__builtin_huge_valf();
    return static_cast<float>(value);
}

// "[2, 3, 4]"
std::string shape_string(const std::vector<int64_t>& shape);

// Number of elements of a shape; throws Error(bad_input, "<where>: ...") on a negative dimension
// or a product past 2^62 (`where` names the file or the tensor the shape comes from).
int64_t element_count(const std::vector<int64_t>& shape, const std::string& where);

}  // namespace attn_viz
