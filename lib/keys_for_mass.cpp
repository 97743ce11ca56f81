// keys_for_90 by bisection: the crossing weight (the smallest weight a descending walk takes) is
// bracketed by thresholds lo < hi with mass_above(lo) >= target > mass_above(hi); each step halves
// the bracket in the float's bit pattern (monotonic for weights >= 0) with one branch-free pass
// over the row, which is in L1. Once few weights remain inside the bracket they are sorted and
// walked, so ties and rounding come out exactly as with a full sort.
#include "keys_for_mass.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

namespace attn_viz {

namespace {

// Count and sum of the weights >= a threshold.
struct MassAbove {
    int64_t count = 0;
    double sum = 0;
};

// row: [S]. The comparison is on the bit patterns (ordered like the weights, which are >= 0), so
// the loop has no floating-point branch and vectorizes: two ways of eight double lanes.
[[gnu::target_clones("avx512f", "avx2", "default")]] MassAbove mass_above(const float* row, int64_t keys, float threshold) {
    constexpr int lanes = 8, ways = 2;
    const int32_t limit = std::bit_cast<int32_t>(threshold);
    auto mask = [limit](float v) { return std::bit_cast<int32_t>(v) >= limit ? int32_t{-1} : int32_t{0}; };
    constexpr int32_t one = std::bit_cast<int32_t>(1.0f);
    double sum[ways][lanes] = {}, count[ways][lanes] = {};  // counts in double too: one vector type
    int64_t j = 0;
    for (; j + ways * lanes <= keys; j += ways * lanes)
        for (int w = 0; w < ways; ++w)
            for (int l = 0; l < lanes; ++l) {
                const float v = row[j + w * lanes + l];
                const int32_t above = mask(v);
                sum[w][l] += static_cast<double>(std::bit_cast<float>(std::bit_cast<int32_t>(v) & above));
                count[w][l] += static_cast<double>(std::bit_cast<float>(one & above));
            }
    MassAbove out;
    for (; j < keys; ++j)
        if (mask(row[j])) out.sum += row[j], ++out.count;
    for (int w = 0; w < ways; ++w)
        for (int l = 0; l < lanes; ++l) out.sum += sum[w][l], out.count += static_cast<int64_t>(count[w][l]);
    return out;
}

// row: [S]. Appends the weights with bit patterns in [low, low + width) to `out` in key order.
// Blocks of sixteen are tested branch-free first; only the few blocks holding one are copied.
[[gnu::target_clones("avx512f", "avx2", "default")]] void gather_range(const float* row, int64_t keys, uint32_t low,
                                                                      uint32_t width, std::vector<float>& out) {
    constexpr int lanes = 16;
    auto inside = [=](float v) { return std::bit_cast<uint32_t>(v) - low < width; };
    int64_t j = 0;
    for (; j + lanes <= keys; j += lanes) {
        bool any = false;
        for (int l = 0; l < lanes; ++l) any |= inside(row[j + l]);
        if (!any) continue;
        for (int l = 0; l < lanes; ++l)
            if (inside(row[j + l])) out.push_back(row[j + l]);
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
        if (above_mid.sum >= target) lo = mid, count_lo = above_mid.count;
        else hi = mid, above_hi = above_mid;
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
