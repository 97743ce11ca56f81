// The non-finite switch, the loaders' check, and which heads NaN/Inf values poison.
#include "nonfinite.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>

#include "error.hpp"
#include "json_tensor.hpp"

namespace attn_viz {
namespace {

std::atomic<bool> nonfinite_allowed{false};

// values: [count]. A float is NaN or Inf when its exponent bits are all ones; testing the bits
// (not std::isfinite) lets the compiler vectorize each block, and a bad value ends the scan at
// the end of its block.
[[gnu::target_clones("avx512f", "avx2", "default")]] bool all_finite(const float* values, int64_t count) {
    constexpr uint32_t exponent_bits = 0x7f800000u;
    constexpr int64_t block = 1024;
    for (int64_t start = 0; start < count; start += block) {
        const int64_t end = std::min(count, start + block);
        bool bad = false;
        for (int64_t i = start; i < end; ++i) bad |= (std::bit_cast<uint32_t>(values[i]) & exponent_bits) == exponent_bits;
        if (bad) return false;
    }
    return true;
}

}  // namespace

void set_allow_nonfinite(bool allow) { nonfinite_allowed = allow; }
bool allow_nonfinite() { return nonfinite_allowed; }

void require_finite(const Tensor& t, const std::string& name, const std::string& where) {
    if (allow_nonfinite()) return;
    if (const std::string bad = first_nonfinite(t, name); !bad.empty())
        fail_input(where, bad + " is not finite (use --allow-nonfinite to load it anyway)");
}

// attention: [H, T, S]; contribution_norms: [H, T]
std::vector<std::string> poisoned_heads(const LayerResult& result) {
    std::vector<std::string> heads;
    if (result.attention.rank() != 3) return heads;
    const int64_t H = result.attention.dim(0), per_head = result.attention.dim(1) * result.attention.dim(2);
    const bool has_shares = result.contribution_norms.rank() == 2 && result.contribution_norms.dim(0) == H;
    // Heads are scanned on OpenMP threads (a 268 MB map at T = 2048 takes ~25 ms on one core).
    std::vector<uint8_t> finite(static_cast<size_t>(H));
#pragma omp parallel for schedule(dynamic)
    for (int64_t h = 0; h < H; ++h) {
        bool ok = all_finite(result.attention.ptr() + h * per_head, per_head);
        if (has_shares) {
            const int64_t T = result.contribution_norms.dim(1);
            ok = ok && all_finite(result.contribution_norms.ptr() + h * T, T);
        }
        finite[static_cast<size_t>(h)] = ok;
    }
    for (int64_t h = 0; h < H; ++h)
        if (!finite[static_cast<size_t>(h)]) heads.push_back("head " + std::to_string(h));
    return heads;
}

}  // namespace attn_viz
