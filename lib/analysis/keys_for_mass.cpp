// keys_for_90 by bisection: the crossing weight (the smallest weight a descending walk takes) is
// bracketed by thresholds lo < hi with mass_above(lo) >= target > mass_above(hi); each step halves
// the bracket in the float's bit pattern (monotonic for weights >= 0) with one branch-free pass
// over the row, which is in L1. Once few weights remain inside the bracket they are sorted and
// walked, so ties and rounding come out exactly as with a full sort.
#include "keys_for_mass.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace attn_viz {

namespace {

// Count and sum of the weights >= a threshold.
struct MassAbove {
    int64_t count = 0;
    double sum = 0;
};

// Eight-lane vectors (GCC vector extensions: AVX-512/AVX2 registers or pairs of SSE ones). The
// auto-vectorizer turned the mixed float/double lane loops into scalar loads and inserts.
using i32x8 = int32_t __attribute__((vector_size(32)));
using u32x8 = uint32_t __attribute__((vector_size(32)));
using f32x8 = float __attribute__((vector_size(32)));
using f64x4 = double __attribute__((vector_size(32)));

// row: [S]. The comparison is on the bit patterns (ordered like the weights, which are >= 0), so
// the loop is branch-free; sums in double like a sequential walk's, in four accumulators.
[[gnu::target_clones("avx512f", "avx2", "default")]] MassAbove mass_above(const float* row, int64_t keys,
                                                                          float threshold) {
    const int32_t limit = std::bit_cast<int32_t>(threshold);
    f64x4 sum[4] = {};
    i32x8 count = {};
    int64_t j = 0;
    for (; j + 16 <= keys; j += 16)
        for (int half = 0; half < 2; ++half) {
            i32x8 bits;
            std::memcpy(&bits, row + j + 8 * half, sizeof bits);
            const i32x8 above = bits >= limit;  // -1 or 0 per lane
            const f32x8 kept = reinterpret_cast<f32x8>(bits & above);
            sum[2 * half] += __builtin_convertvector(__builtin_shufflevector(kept, kept, 0, 1, 2, 3), f64x4);
            sum[2 * half + 1] += __builtin_convertvector(__builtin_shufflevector(kept, kept, 4, 5, 6, 7), f64x4);
            count -= above;
        }
    MassAbove out;
    for (; j < keys; ++j)
        if (std::bit_cast<int32_t>(row[j]) >= limit) out.sum += row[j], ++out.count;
    for (const f64x4& part : sum)
        for (int l = 0; l < 4; ++l) out.sum += part[l];
    for (int l = 0; l < 8; ++l) out.count += count[l];
    return out;
}

// row: [S]. Appends the weights with bit patterns in [low, low + width) to `out` in key order.
// Blocks of sixteen are tested branch-free first; only the few blocks holding one are copied.
[[gnu::target_clones("avx512f", "avx2", "default")]] void gather_range(const float* row, int64_t keys, uint32_t low,
                                                                       uint32_t width, std::vector<float>& out) {
    auto inside = [=](float v) { return std::bit_cast<uint32_t>(v) - low < width; };
    int64_t j = 0;
    for (; j + 16 <= keys; j += 16) {
        u32x8 first, second;
        std::memcpy(&first, row + j, sizeof first);
        std::memcpy(&second, row + j + 8, sizeof second);
        const u32x8 hits = ((first - low) < width) | ((second - low) < width);
        uint64_t any[4];
        std::memcpy(any, &hits, sizeof any);
        if ((any[0] | any[1] | any[2] | any[3]) == 0) continue;
        for (int64_t k = j; k < j + 16; ++k)
            if (inside(row[k])) out.push_back(row[k]);
    }
    for (; j < keys; ++j)
        if (inside(row[j])) out.push_back(row[j]);
}

uint32_t bits_of(float v) { return std::bit_cast<uint32_t>(v); }
float float_of(uint32_t bits) { return std::bit_cast<float>(bits); }

}  // namespace

int64_t KeysForMass::count(const float* row, int64_t keys, double mass, float maximum, double fraction) {
    const double target = fraction * mass;
    if (!(target > 0) || keys <= 0) return 0;
    // Step 1: the bracket. Weights below (1 - fraction) mass / S hold less than the share the
    // count may leave out all together, so the crossing weight is at least that; it is at most
    // the maximum. The lower end's count is only an upper bound (S) until a step moves it.
    constexpr int64_t few = 32;  // weights left in the bracket when sorting is cheaper than a pass
    float lo = static_cast<float>((1.0 - fraction) * mass / static_cast<double>(keys));
    float hi = std::nextafter(maximum, std::numeric_limits<float>::infinity());
    int64_t count_lo = keys;
    MassAbove above_hi;
    // Step 2: halve the bracket until few weights (or a single float value) remain inside it.
    while (count_lo - above_hi.count > few && bits_of(hi) - bits_of(lo) > 1) {
        const float mid = float_of(bits_of(lo) + (bits_of(hi) - bits_of(lo)) / 2);
        const MassAbove above_mid = mass_above(row, keys, mid);
        if (above_mid.sum >= target)
            lo = mid, count_lo = above_mid.count;
        else
            hi = mid, above_hi = above_mid;
    }
    // Step 3: the weights inside the bracket, largest first, on top of everything above it.
    candidates_.clear();
    gather_range(row, keys, bits_of(lo), bits_of(hi) - bits_of(lo), candidates_);
    std::sort(candidates_.begin(), candidates_.end(), std::greater<float>());
    double reached = above_hi.sum;
    int64_t taken = above_hi.count;
    for (float v : candidates_) {
        if (reached >= target) break;
        reached += v, ++taken;
    }
    return taken;  // all weights >= lo when only rounding left the target unreached
}

}  // namespace attn_viz
