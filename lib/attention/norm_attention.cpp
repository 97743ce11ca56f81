#include "norm_attention.hpp"

#include "error.hpp"

namespace attn_viz {

Tensor norm_based_map(const LayerResult& result) {
    const Tensor& a = result.attention;
    const int64_t H = a.dim(0), T = a.dim(1), S = a.dim(2);
    if (result.value_norms.shape != std::vector<int64_t>{H, S})
        throw Error(ErrorKind::internal, "norm-based map of a layer run without value norms");
    Tensor map = Tensor::uninitialized(a.shape);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < S; ++j) {
                const int64_t e = (h * T + i) * S + j;
                map.data[e] = a.data[e] * result.value_norms.data[h * S + j];
            }
    return map;
}

}  // namespace attn_viz
