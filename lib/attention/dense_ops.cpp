#include "dense_ops.hpp"

#include <cmath>

namespace attn_viz {

Tensor linear(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias) {
    Tensor y = Tensor::uninitialized({x.dim(0), w.dim(1)});
    MatmulShape shape = dense_matmul(x.dim(0), x.dim(1), w.dim(1));
    shape.has_bias = !bias.empty();
    backend.matmul(shape, x.ptr(), w.ptr(), bias.empty() ? nullptr : bias.ptr(), y.ptr());
    return y;
}

void activate_in_place(Tensor& x, Activation activation) {
    constexpr double sqrt_half = 0.70710678118654752440, sqrt_two_over_pi = 0.79788456080286535588;
    if (activation == Activation::silu) {
        for (float& v : x.data) v = v / (1.0f + std::exp(-v));
        return;
    }
    for (float& v : x.data) {
        const double a = v;
        v = static_cast<float>(activation == Activation::gelu_erf ? 0.5 * a * (1.0 + std::erf(a * sqrt_half))
                                                                  : 0.5 * a * (1.0 + std::tanh(sqrt_two_over_pi * (a + 0.044715 * a * a * a))));
    }
}

void add_in_place(Tensor& x, const Tensor& delta) {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += delta.data[i];
}

}  // namespace attn_viz
