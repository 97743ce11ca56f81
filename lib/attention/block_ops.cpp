#include "block_ops.hpp"

#include <cmath>

namespace attn_viz {
namespace {

// x: [T, D] -> each row (x - mean) / sqrt(var + eps) * weight + bias (biased variance, as torch).
Tensor layer_norm(const Tensor& x, const NormWeights& norm, double epsilon) {
    const int64_t T = x.dim(0), D = x.dim(1);
    Tensor y = Tensor::uninitialized({T, D});
    for (int64_t t = 0; t < T; ++t) {
        const float* row = x.ptr() + t * D;
        double sum = 0, squares = 0;
        for (int64_t i = 0; i < D; ++i) sum += row[i];
        const double mean = sum / static_cast<double>(D);
        for (int64_t i = 0; i < D; ++i) squares += (row[i] - mean) * (row[i] - mean);
        const double scale = 1.0 / std::sqrt(squares / static_cast<double>(D) + epsilon);
        for (int64_t i = 0; i < D; ++i)
            y.data[t * D + i] = static_cast<float>((row[i] - mean) * scale * norm.weight.data[i] + norm.bias.data[i]);
    }
    return y;
}

}  // namespace

Tensor normalized(const Tensor& x, const NormWeights& norm, NormKind kind, double epsilon) {
    switch (kind) {
        case NormKind::rms: return rms_normalized(x, norm.weight, epsilon);
        case NormKind::rms_offset_one: return rms_normalized(x, norm.weight, epsilon, 1.0f);
        case NormKind::layer_norm: break;
    }
    return layer_norm(x, norm, epsilon);
}

Tensor feed_forward(OnednnBackend& backend, const Tensor& x, const BlockWeights& block, const ModelConfig& config) {
    Tensor hidden = linear(backend, x, block.w_in, block.b_in);  // [T, F]
    activate_in_place(hidden, config.activation);
    if (config.feed_forward == FeedForwardKind::gated) {
        const Tensor up = linear(backend, x, block.w_up, block.b_up);  // [T, F]
        for (size_t i = 0; i < hidden.data.size(); ++i) hidden.data[i] *= up.data[i];
    }
    return linear(backend, hidden, block.w_out, block.b_out);
}

}  // namespace attn_viz
