// The residual stream's components as a ModelRun holds them, and a norm's scale frozen on one
// row, shared by the attributions that decompose the stream (logit_attribution.hpp: the final
// residual through the final norm; qk_attribution.hpp: the stream entering a block through its
// first norm). The stream entering block l is
//   x = embedding + sum_{m<l} r (sum_h z_mh W_O^mh + b_O^m + ffn_m)
// with r the model's residual_scale (Granite's residual_multiplier; 1 elsewhere) and r ffn_m what
// block m added besides its scaled attention output (its feed-forward, in a pre-norm or a parallel
// block), recovered as the difference of the streams around it.
#pragma once

#include <cstdint>

#include "model_run.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// a, b: [n] rows -> a . b in double.
double dot_double(const float* a, const float* b, int64_t n);

// A norm over one row x [D] with its statistics held fixed (TransformerLens' apply_ln_to_stack):
// norm(x) = scale * center(x) * weight + bias, and so norm(sum_c c) = sum_c scale * center(c) *
// weight + bias, linear in the components. center subtracts the row's mean for LayerNorm only.
struct FrozenNorm {
    bool present = false;   // the model has this norm (weight not empty); otherwise scale 1, weight 1
    bool centered = false;  // LayerNorm: each component is centred over D
    double mean = 0.0;      // of x (LayerNorm), else 0
    double scale = 1.0;     // 1 / sqrt(mean((x - mean)^2) + eps), or 1 without the norm
};

// x: [D] one row of the stream the norm reads.
FrozenNorm frozen_norm(const float* x, int64_t D, const NormWeights& norm, const ModelConfig& config);

// The norm's weight at feature i as it multiplies (1 + w for Gemma's rms_offset_one), 1 without a norm.
double frozen_norm_weight(const NormWeights& norm, NormKind kind, int64_t i);

// The residual stream leaving block l: the one entering block l + 1, or the final one after the last.
const Tensor& stream_leaving(const ModelRun& run, size_t l);

// Block l's feed-forward output at position t: what the block added to the stream besides its
// attention output `attended` ([D], that output at t as added, residual_scale included):
// leaving - entering - attended, in the
// arithmetic of T (float: as the stream's floats subtract; double: exactly of the floats).
template <typename T>
void feed_forward_row(const ModelRun& run, size_t l, int64_t t, const T* attended, T* out) {
    const Tensor &entering = run.residual[l], &leaving = stream_leaving(run, l);
    const int64_t D = entering.dim(1);
    for (int64_t i = 0; i < D; ++i)
        out[i] = static_cast<T>(leaving.data[t * D + i]) - static_cast<T>(entering.data[t * D + i]) - attended[i];
}

}  // namespace attn_viz
