// The dense steps of a whole-model forward pass besides attention: linear layers on oneDNN,
// activations and residual additions.
#pragma once

#include "activation.hpp"
#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// x: [rows, k]; w: [k, n]; bias: [n] or empty -> x w + bias: [rows, n]
Tensor linear(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias = {});

// x: [rows, k]; w: [n, k], a row per output (nn.Linear's and GGUF's layout); bias: [n] or empty
// -> x w^T + bias: [rows, n]. The layout of the feed-forward and classifier weights: oneDNN 2.6
// multiplies by a [k, n] matrix as wide as theirs at 40% of its rate, by [n, k] at the full rate.
Tensor linear_out_in(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias = {});

// x -> activation(x), element by element (GELU in double precision, SiLU in float as llama2.c,
// e^x to 2e-7 relative), in parallel over OpenMP's threads.
void activate_in_place(Tensor& x, Activation activation);

// x, gate: the same shape -> x = activation(x) * gate, in one pass (a gated feed-forward's
// act(x w_in) * (x w_up)).
void activate_and_gate(Tensor& x, const Tensor& gate, Activation activation);

// x: [..., width]; weight: [width] -> each row v (of the last dimension) as
// v / sqrt(mean(v^2) + epsilon) * (offset + weight), accumulated in double, as float: a model's
// RMSNorm (offset 0; Gemma's 1) over [T, D], or a per-head q/k norm over [H, T, d_h].
// Rows in parallel.
Tensor rms_normalized(const Tensor& x, const Tensor& weight, double epsilon, float offset = 0.0f);

// x: [H, T, d_h] head-major; weight: [H*d_h] -> each token's H*d_h values across heads as one
// vector v / sqrt(mean(v^2) + epsilon) * weight (OLMo 2's q/k norms over the whole projection,
// before its heads are split), accumulated in double, as float; tokens in parallel.
Tensor rms_normalized_across_heads(const Tensor& x, const Tensor& weight, double epsilon);

// x: [T, D]; weight, bias: [D] (bias empty: none) -> each row (x_t - mean) / sqrt(var + eps) * weight + bias (biased
// variance, as torch), accumulated in double, as float; rows in parallel.
Tensor layer_normalized(const Tensor& x, const Tensor& weight, const Tensor& bias, double epsilon);

// x += scale * delta, element by element (same shapes, else Error internal).
void add_in_place(Tensor& x, const Tensor& delta, float scale = 1.0f);

}  // namespace attn_viz
