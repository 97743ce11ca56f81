// A head's share of a layer's output, taken out and replaced.
#include "head_replacement.hpp"

#include <algorithm>

#include "dense_ops.hpp"

namespace attn_viz {

Tensor head_output(const Tensor& context, int64_t head, int64_t d_head) {
    const int64_t T = context.dim(0), width = context.dim(1);
    Tensor z({T, d_head});
    for (int64_t t = 0; t < T; ++t)
        std::copy_n(context.ptr() + t * width + head * d_head, d_head, z.ptr() + t * d_head);
    return z;
}

Tensor token_mean(const Tensor& z) {
    const int64_t T = z.dim(0), d_head = z.dim(1);
    Tensor mean({T, d_head});
    for (int64_t i = 0; i < d_head; ++i) {
        double sum = 0;
        for (int64_t t = 0; t < T; ++t) sum += z.data[t * d_head + i];
        for (int64_t t = 0; t < T; ++t) mean.data[t * d_head + i] = static_cast<float>(sum / static_cast<double>(T));
    }
    return mean;
}

Tensor ablation_replacement(const Tensor& z, bool by_mean) { return by_mean ? token_mean(z) : Tensor(z.shape); }

Tensor output_with_head_replaced(OnednnBackend& backend, const LayerWeights& attention, const LayerResult& layer,
                                 int64_t head, const Tensor& replacement) {
    const int64_t d_head = attention.d_head, T = layer.context.dim(0), width = layer.context.dim(1);
    // Step 1: Z' = Z with head h's d_h columns replaced.
    Tensor context = layer.context;  // [T, H*d_h]
    for (int64_t t = 0; t < T; ++t)
        std::copy_n(replacement.ptr() + t * d_head, d_head, context.ptr() + t * width + head * d_head);
    // Step 2: the output projection as the layer ran it.
    return linear(backend, context, attention.w_o, attention.b_o);
}

}  // namespace attn_viz
