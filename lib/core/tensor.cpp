#include "tensor.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "memory_budget.hpp"

namespace attn_viz {

Tensor::Tensor(std::vector<int64_t> shape_) : Tensor(uninitialized(std::move(shape_))) {
    std::fill(data.begin(), data.end(), 0.0f);
}

Tensor Tensor::uninitialized(std::vector<int64_t> shape, const std::string& what) {
    const int64_t count = element_count(shape, what);
    const uint64_t bytes = saturating_product(static_cast<uint64_t>(count), sizeof(float));
    if (bytes > machine_memory())
        throw Error(ErrorKind::bad_input,
                    fmt::format("{} of shape {} needs {} bytes, more than this machine's memory of {} bytes", what,
                                shape_string(shape), bytes, machine_memory()));
    Tensor t;
    t.shape = std::move(shape);
    t.data.resize(static_cast<size_t>(count));
    return t;
}

std::string shape_string(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

int64_t element_count(const std::vector<int64_t>& shape, const std::string& where) {
    constexpr int64_t limit = int64_t{1} << 62;
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) fail_input(where, fmt::format("negative dimension in shape {}", shape_string(shape)));
        if (d != 0 && n > limit / d)
            fail_input(where, fmt::format("shape {} has more than 2^62 elements", shape_string(shape)));
        n *= d;
    }
    return n;
}

}  // namespace attn_viz
