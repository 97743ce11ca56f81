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

// x += delta, element by element (same shapes).
void add_in_place(Tensor& x, const Tensor& delta);

}  // namespace attn_viz
