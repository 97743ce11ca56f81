// ln(x) in float with about 1e-7 relative error, written without branches or library calls so
// that loops over arrays of weights vectorize (std::log does not without -ffast-math).
#pragma once

#include <bit>
#include <cstdint>

namespace attn_viz {

// x > 0. For x == 0 (and denormals) returns a finite value near -88, so a * fast_ln(a) is 0 at a == 0.
inline float fast_ln(float x) {
    // Split x = 2^e m with m in [sqrt(1/2), sqrt(2)) by integer arithmetic on the bits: subtracting
    // sqrt(1/2)'s bits moves the exponent boundary there, so no branch is needed.
    constexpr int32_t sqrt_half_bits = 0x3f3504f3;
    const int32_t shifted = std::bit_cast<int32_t>(x) - sqrt_half_bits;
    const int32_t exponent = shifted >> 23;  // arithmetic shift
    const float mantissa = std::bit_cast<float>((shifted & 0x007fffff) + sqrt_half_bits);
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: truncation error below 1e-9.
    const float s = (mantissa - 1.0f) / (mantissa + 1.0f), s2 = s * s;
    const float series = s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
    return static_cast<float>(exponent) * 0.693147180559945f + series;
}

}  // namespace attn_viz
