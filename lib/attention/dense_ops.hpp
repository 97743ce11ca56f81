// The dense steps of a whole-model forward pass besides attention: linear layers on oneDNN and
// residual additions.
#pragma once

#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// x: [rows, k]; w: [k, n]; bias: [n] or empty -> x w + bias: [rows, n]
Tensor linear(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias = {});

// x += delta, element by element (same shapes).
void add_in_place(Tensor& x, const Tensor& delta);

}  // namespace attn_viz
