// A head's share of a layer's output, taken out and replaced.
#include "head_replacement.hpp"

#include <algorithm>

namespace attn_viz {

Tensor head_output(const Tensor& context, int64_t head, int64_t d_head) {
    const int64_t T = context.dim(0), width = context.dim(1);
    Tensor z({T, d_head});
    for (int64_t t = 0; t < T; ++t) std::copy_n(context.ptr() + t * width + head * d_head, d_head, z.ptr() + t * d_head);
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

Tensor output_with_head_replaced(OnednnBackend& backend, const LayerWeights& attention, const LayerResult& layer, int64_t head,
                                 const Tensor& replacement) {
    const Tensor& w_o = attention.w_o;  // [H*d_h, D]
    const int64_t d_head = attention.d_head, T = layer.output.dim(0), D = layer.output.dim(1);
    // Y - (z_h - r) W_O^h: W_O^h is head h's d_h contiguous rows of W_O.
    Tensor removed = head_output(layer.context, head, d_head);
    for (size_t i = 0; i < removed.data.size(); ++i) removed.data[i] -= replacement.data[i];
    Tensor share({T, D});
    backend.matmul(dense_matmul(T, d_head, D), removed.ptr(), w_o.ptr() + head * d_head * D, nullptr, share.ptr());
    Tensor output = layer.output;
    for (size_t i = 0; i < output.data.size(); ++i) output.data[i] -= share.data[i];
    return output;
}

}  // namespace attn_viz
