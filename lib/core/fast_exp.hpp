// e^x in float with about 2e-7 relative error, branch-free so that loops over arrays vectorize
// (std::exp does not without -ffast-math). Companion of fast_log.hpp.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

namespace attn_viz {

// x <= 0 (softmax arguments after subtracting the row maximum). Returns exactly 0 for
// x < -87.3 (where e^x leaves float's normal range) and for -inf.
inline float fast_exp_nonpositive(float x) {
    constexpr float log2e = 1.44269504088896341f, ln2_hi = 0.693145751953125f, ln2_lo = 1.42860682030941723e-6f;
    constexpr float lowest = -87.3365f;         // e^lowest ~ 2^-126, the smallest normal float
    constexpr float round_magic = 12582912.0f;  // 1.5 * 2^23: adding and subtracting rounds to an integer
    const float clamped = std::max(x, lowest);
    // Step 1: x = n ln2 + r with integer n and |r| <= ln2 / 2 (ln2 split in two for exactness).
    const float n = (clamped * log2e + round_magic) - round_magic;
    const float r = (clamped - n * ln2_hi) - n * ln2_lo;
    // Step 2: e^r by its Taylor series to r^7 (truncation below 4e-9 for |r| <= 0.347).
    const float p =
        1.0f +
        r * (1.0f +
             r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
    // Step 3: times 2^n, built from its exponent bits (n >= -126 here).
    const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
    return x < lowest ? 0.0f : p * scale;
}

}  // namespace attn_viz
