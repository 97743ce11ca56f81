// The activations of feed-forward layers (config.json's hidden_act / activation_function, as
// transformers' ACT2FN names them; parse_activation in hf_config.hpp).
#pragma once

namespace attn_viz {

enum class Activation {
    gelu_erf,   // 0.5 x (1 + erf(x / sqrt 2)): "gelu"
    gelu_tanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): "gelu_new", "gelu_pytorch_tanh", "gelu_fast"
    silu,       // x / (1 + e^-x): "silu", "swish"
    relu,       // max(x, 0): "relu" (T5 v1.0's feed-forward)
};

}  // namespace attn_viz
