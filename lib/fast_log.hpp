// ln(x) in float with about 1e-7 relative error, written without branches or library calls so
// that loops over arrays of weights vectorize (std::log does not without -ffast-math).
#pragma once

#include <bit>
#include <cstdint>

namespace attn_viz {

// x > 0. For x == 0 (and denormals) returns a finite value near -88, so a * fast_ln(a) is 0 at a == 0.
inline float fast_ln(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    int32_t exponent = static_cast<int32_t>(bits >> 23) - 127;
    float mantissa = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);  // in [1, 2)
    // Move the mantissa into [sqrt(1/2), sqrt(2)) so the atanh series converges in five terms.
    const bool high = mantissa > 1.41421356f;
    mantissa = high ? mantissa * 0.5f : mantissa;
    exponent += high ? 1 : 0;
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: truncation error below 1e-9.
    const float s = (mantissa - 1.0f) / (mantissa + 1.0f), s2 = s * s;
    const float series = s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
    return static_cast<float>(exponent) * 0.693147180559945f + series;
}

}  // namespace attn_viz
