#include "dense_ops.hpp"

#include <algorithm>
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
    if (activation == Activation::relu) {
        for (float& v : x.data) v = std::max(v, 0.0f);
        return;
    }
    for (float& v : x.data) {
        const double a = v;
        v = static_cast<float>(activation == Activation::gelu_erf ? 0.5 * a * (1.0 + std::erf(a * sqrt_half))
                                                                  : 0.5 * a * (1.0 + std::tanh(sqrt_two_over_pi * (a + 0.044715 * a * a * a))));
    }
}

Tensor rms_normalized(const Tensor& x, const Tensor& weight, double epsilon, float offset) {
    const int64_t width = x.dim(x.rank() - 1), rows = static_cast<int64_t>(x.data.size()) / width;
    Tensor y(x.shape);
    for (int64_t t = 0; t < rows; ++t) {
        const float* row = x.ptr() + t * width;
        double sum = 0;
        for (int64_t i = 0; i < width; ++i) sum += double(row[i]) * row[i];
        const double scale = 1.0 / std::sqrt(sum / static_cast<double>(width) + epsilon);
        for (int64_t i = 0; i < width; ++i) y.data[t * width + i] = static_cast<float>(row[i] * scale * (offset + weight.data[i]));
    }
    return y;
}

void add_in_place(Tensor& x, const Tensor& delta) {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += delta.data[i];
}

}  // namespace attn_viz
