// The loaders' finite check and a fast finite scan.
#include "finite.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

void require_finite(const Tensor& t, const std::string& name, const std::string& where, const LoadLimits& limits) {
    if (limits.allow_nonfinite) return;
    if (const std::string bad = first_nonfinite(t, name); !bad.empty())
        fail_input(where, fmt::format("{} is not finite", bad), Remedy::allow_nonfinite);
}

std::string first_nonfinite(const Tensor& t, const std::string& name) {
    if (all_finite(t.ptr(), t.size())) return "";  // the usual case, at the vector scan's speed
    for (int64_t n = 0; n < t.size(); ++n) {
        if (std::isfinite(t.data[n])) continue;
        std::vector<int64_t> index(t.shape.size());
        int64_t rest = n;
        for (size_t d = t.shape.size(); d-- > 0;) index[d] = rest % t.shape[d], rest /= t.shape[d];
        return fmt::format("{}{}", name, shape_string(index));
    }
    return "";
}

// values: [count]. A float is NaN or Inf when its magnitude bits (all but the sign) are at least
// those of Inf: all exponent bits set. Their maximum over a block is a reduction the compiler
// vectorizes (a boolean "or" of comparisons is not: GCC 12 leaves that loop scalar, at ~1.5 ns a
// value), and a bad value ends the scan at the end of its block.
[[gnu::target_clones("avx512f", "avx2", "default")]] bool all_finite(const float* values, int64_t count) {
    constexpr uint32_t magnitude_bits = 0x7fffffffu, infinity_bits = 0x7f800000u;
    constexpr int64_t block = 1024;
    for (int64_t start = 0; start < count; start += block) {
        const int64_t end = std::min(count, start + block);
        uint32_t largest = 0;
        for (int64_t i = start; i < end; ++i)
            largest = std::max(largest, std::bit_cast<uint32_t>(values[i]) & magnitude_bits);
        if (largest >= infinity_bits) return false;
    }
    return true;
}

}  // namespace attn_viz
