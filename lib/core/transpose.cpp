#include "transpose.hpp"

#include <algorithm>

namespace attn_viz {

void transpose_into(const float* src, int64_t rows, int64_t cols, int64_t src_stride, float* dst, int64_t dst_stride) {
    constexpr int64_t side = 64;
    float block[side][side];
    for (int64_t r0 = 0; r0 < rows; r0 += side) {
        const int64_t height = std::min(side, rows - r0);
        for (int64_t c0 = 0; c0 < cols; c0 += side) {
            const int64_t width = std::min(side, cols - c0);
            for (int64_t r = 0; r < height; ++r) std::copy_n(src + (r0 + r) * src_stride + c0, width, block[r]);
            for (int64_t c = 0; c < width; ++c) {
                float* out = dst + (c0 + c) * dst_stride + r0;
                for (int64_t r = 0; r < height; ++r) out[r] = block[r][c];
            }
        }
    }
}

}  // namespace attn_viz
