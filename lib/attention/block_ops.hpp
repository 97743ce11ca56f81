// The steps of a block besides attention, chosen by what the block's data says
// (model_weights.hpp): its norms (NormKind) and its feed-forward (FeedForwardKind).
#pragma once

#include "dense_ops.hpp"
#include "model_weights.hpp"
#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// x: [T, D] -> each row normalized by `kind` with `epsilon`, accumulated in double, as float:
//   rms:        x_t / sqrt(mean(x_t^2) + eps) * weight
//   rms_offset_one: x_t / sqrt(mean(x_t^2) + eps) * (1 + weight)   (Gemma)
//   layer_norm: (x_t - mean) / sqrt(var + eps) * weight + bias (biased variance, as torch)
Tensor normalized(const Tensor& x, const NormWeights& norm, NormKind kind, double epsilon);

// x: [T, D] -> the block's feed-forward by config.feed_forward and config.activation: [T, D]
//   gated: (act(x w_in + b_in) * (x w_up + b_up)) w_out + b_out
//   plain: act(x w_in + b_in) w_out + b_out
Tensor feed_forward(OnednnBackend& backend, const Tensor& x, const BlockWeights& block, const ModelConfig& config);

}  // namespace attn_viz
