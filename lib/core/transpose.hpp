// Transposing float matrices by blocks, the one copy the weight decoders, the Gram matrices and
// the fingerprints share.
#pragma once

#include <cstdint>

namespace attn_viz {

// src: [rows, cols] with rows src_stride floats apart -> dst[c * dst_stride + r] = src[r * src_stride + c].
// By 64 x 64 blocks read whole into a local buffer, so that both sides touch each page in runs
// (element by element, the column side touched another page per element). src and dst must not
// overlap.
void transpose_into(const float* src, int64_t rows, int64_t cols, int64_t src_stride, float* dst, int64_t dst_stride);

}  // namespace attn_viz
