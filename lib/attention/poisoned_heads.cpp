#include "poisoned_heads.hpp"

#include <cstdint>

#include "finite.hpp"
#include "head_names.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

// attention: [H, T, S]; contribution_norms: [H, T]
std::vector<std::string> poisoned_heads(const LayerResult& result, int64_t layer) {
    std::vector<std::string> heads;
    if (result.attention.rank() != 3) return heads;
    const int64_t H = result.attention.dim(0), per_head = result.attention.dim(1) * result.attention.dim(2);
    const bool has_shares = result.contribution_norms.rank() == 2 && result.contribution_norms.dim(0) == H;
    // Heads are scanned on OpenMP threads (a 268 MB map at T = 2048 takes ~25 ms on one core).
    std::vector<uint8_t> finite(static_cast<size_t>(H));
#pragma omp parallel for schedule(dynamic) if (H * per_head > parallel_min_values)
    for (int64_t h = 0; h < H; ++h) {
        bool ok = all_finite(result.attention.ptr() + h * per_head, per_head);
        if (has_shares) {
            const int64_t T = result.contribution_norms.dim(1);
            ok = ok && all_finite(result.contribution_norms.ptr() + h * T, T);
        }
        finite[static_cast<size_t>(h)] = ok;
    }
    for (int64_t h = 0; h < H; ++h)
        if (!finite[static_cast<size_t>(h)]) heads.push_back(head_name(layer, h));
    return heads;
}

}  // namespace attn_viz
