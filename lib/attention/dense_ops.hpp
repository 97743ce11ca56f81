// The dense steps of a whole-model forward pass besides attention: linear layers on oneDNN,
// activations and residual additions.
#pragma once

#include "activation.hpp"
#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// x: [rows, k]; w: [k, n]; bias: [n] or empty -> x w + bias: [rows, n]
Tensor linear(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias = {});

// x -> activation(x), element by element (GELU in double precision, SiLU in float as llama2.c).
void activate_in_place(Tensor& x, Activation activation);

// x: [..., width]; weight: [width] -> each row v (of the last dimension) as
// v / sqrt(mean(v^2) + epsilon) * (offset + weight), accumulated in double, as float: a model's
// RMSNorm (offset 0; Gemma's 1) over [T, D], or a per-head q/k norm over [H, T, d_h].
Tensor rms_normalized(const Tensor& x, const Tensor& weight, double epsilon, float offset = 0.0f);

// x += delta, element by element (same shapes).
void add_in_place(Tensor& x, const Tensor& delta);

}  // namespace attn_viz
