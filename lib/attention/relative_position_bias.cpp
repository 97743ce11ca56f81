#include "relative_position_bias.hpp"

#include <algorithm>
#include <cmath>

namespace attn_viz {

int64_t relative_position_bucket(int64_t relative, bool bidirectional, int64_t buckets, int64_t max_distance) {
    int64_t bucket = 0;
    if (bidirectional) {
        buckets /= 2;
        if (relative > 0) bucket += buckets;
        relative = std::abs(relative);
    } else {
        relative = std::max<int64_t>(-relative, 0);
    }
    const int64_t max_exact = buckets / 2;
    if (relative < max_exact) return bucket + relative;
    // float32 throughout, the divisor's logarithm in double first (Python's math.log), as transformers.
    const float ratio = std::log(static_cast<float>(relative) / static_cast<float>(max_exact));
    const float divisor =
        static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact)));
    const float scaled = ratio / divisor * static_cast<float>(buckets - max_exact);
    return bucket + std::min<int64_t>(max_exact + static_cast<int64_t>(scaled), buckets - 1);
}

Tensor relative_position_bias(const Tensor& table, int64_t T, int64_t S, bool bidirectional, int64_t max_distance) {
    const int64_t buckets = table.dim(0), H = table.dim(1);
    Tensor bias = Tensor::uninitialized({H, T, S});
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < S; ++j) {
            const int64_t bucket = relative_position_bucket(j - i, bidirectional, buckets, max_distance);
            for (int64_t h = 0; h < H; ++h) bias.data[(h * T + i) * S + j] = table.data[bucket * H + h];
        }
    return bias;
}

}  // namespace attn_viz
