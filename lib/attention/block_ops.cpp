#include "block_ops.hpp"

namespace attn_viz {

Tensor normalized(const Tensor& x, const NormWeights& norm, NormKind kind, double epsilon) {
    switch (kind) {
        case NormKind::rms:
            return rms_normalized(x, norm.weight, epsilon);
        case NormKind::rms_offset_one:
            return rms_normalized(x, norm.weight, epsilon, 1.0f);
        case NormKind::layer_norm:
            break;
    }
    return layer_normalized(x, norm.weight, norm.bias, epsilon);
}

Tensor feed_forward(OnednnBackend& backend, const Tensor& x, const BlockWeights& block, const ModelConfig& config) {
    Tensor hidden = linear_out_in(backend, x, block.w_in, block.b_in);  // [T, F]
    if (config.feed_forward == FeedForwardKind::gated)                  // act(hidden) * up
        activate_and_gate(hidden, linear_out_in(backend, x, block.w_up, block.b_up), config.activation);
    else
        activate_in_place(hidden, config.activation);
    return linear_out_in(backend, hidden, block.w_out, block.b_out);
}

}  // namespace attn_viz
