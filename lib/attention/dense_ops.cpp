#include "dense_ops.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "fast_exp.hpp"
#include "gram_matrix.hpp"
#include "parallel_for.hpp"

namespace attn_viz {
namespace {

// The element-by-element passes run over OpenMP's threads (the pool oneDNN uses, between its
// calls) in runs of parallel_min_values values, or of rows of at least that many values; smaller
// work stays on the calling thread.

// body(begin, end) for runs covering [0, n), in parallel when there are several.
template <class Body>
void over_runs(int64_t n, const Body& body) {
#pragma omp parallel for schedule(static) if (n > parallel_min_values)
    for (int64_t begin = 0; begin < n; begin += parallel_min_values)
        body(begin, std::min(n, begin + parallel_min_values));
}

// body(row) for every row of `rows` rows of `width` values, in parallel when they are many values.
template <class Body>
void over_rows(int64_t rows, int64_t width, const Body& body) {
#pragma omp parallel for schedule(static) if (rows * width > parallel_min_values && rows > 1)
    for (int64_t t = 0; t < rows; ++t) body(t);
}

// v: [n] -> sum (v - center)^power in double (power 1 or 2), eight lanes so that the loop vectorizes.
template <int power>
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] double deviation_sum(const float* v, double center,
                                                                                    int64_t n) {
    static_assert(power == 1 || power == 2);
    const auto term = [center](float x) {
        const double d = x - center;
        if constexpr (power == 1)
            return d;
        else
            return d * d;
    };
    constexpr int lanes = 8;
    double part[lanes] = {}, sum = 0;
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes)
        for (int l = 0; l < lanes; ++l) part[l] += term(v[i + l]);
    for (; i < n; ++i) sum += term(v[i]);
    for (double p : part) sum += p;
    return sum;
}

// row, weight: [n] -> out = row * scale * (offset + weight), in double, as float.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void scale_row(const float* __restrict row, double scale,
                                                                              const float* __restrict weight,
                                                                              float offset, float* __restrict out,
                                                                              int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(row[i] * scale * (offset + weight[i]));
}

// row, weight, bias: [n] -> out = (row - mean) * scale * weight + bias, in double, as float (bias
// null: none, Cohere's LayerNorms).
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void center_scale_row(const float* __restrict row,
                                                                                     double mean, double scale,
                                                                                     const float* __restrict weight,
                                                                                     const float* __restrict bias,
                                                                                     float* __restrict out, int64_t n) {
    if (!bias) {
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>((row[i] - mean) * scale * weight[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>((row[i] - mean) * scale * weight[i] + bias[i]);
}

// v: [n] -> SiLU(v) = v / (1 + e^-v) in float, times gate where it is given. e^-|v| by
// fast_exp_nonpositive (2e-7 relative) so that the loop vectorizes; for v < 0,
// v / (1 + e^-v) = v e^v / (1 + e^v).
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void silu_run(float* __restrict v,
                                                                             const float* __restrict gate, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float e = fast_exp_nonpositive(-std::fabs(v[i]));
        const float y = v[i] * (v[i] >= 0.0f ? 1.0f : e) / (1.0f + e);
        v[i] = gate ? y * gate[i] : y;
    }
}

// v: [n] -> max(v, 0), times gate where it is given.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void relu_run(float* __restrict v,
                                                                             const float* __restrict gate, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float y = std::max(v[i], 0.0f);
        v[i] = gate ? y * gate[i] : y;
    }
}

// v: [n] -> GELU(v) in double (erf or tanh form), as float, times gate where it is given.
void gelu_run(float* v, const float* gate, int64_t n, Activation activation) {
    constexpr double sqrt_half = 0.70710678118654752440, sqrt_two_over_pi = 0.79788456080286535588;
    for (int64_t i = 0; i < n; ++i) {
        const double a = v[i];
        const float y =
            static_cast<float>(activation == Activation::gelu_erf
                                   ? 0.5 * a * (1.0 + std::erf(a * sqrt_half))
                                   : 0.5 * a * (1.0 + std::tanh(sqrt_two_over_pi * (a + 0.044715 * a * a * a))));
        v[i] = gate ? y * gate[i] : y;
    }
}

// x: [n]; gate: [n] or null -> x = activation(x) (* gate), in parallel runs.
void activate(float* x, const float* gate, int64_t n, Activation activation) {
    over_runs(n, [&](int64_t begin, int64_t end) {
        float* v = x + begin;
        const float* g = gate ? gate + begin : nullptr;
        switch (activation) {
            case Activation::silu:
                return silu_run(v, g, end - begin);
            case Activation::relu:
                return relu_run(v, g, end - begin);
            case Activation::gelu_erf:
            case Activation::gelu_tanh:
                return gelu_run(v, g, end - begin, activation);
        }
    });
}

// a, b: [n] -> a += b.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void add_run(float* __restrict a,
                                                                            const float* __restrict b, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a[i] += b[i];
}

// a, b: [n] -> a += scale * b.
[[gnu::target_clones("avx512f", "arch=x86-64-v3", "default")]] void add_scaled_run(float* __restrict a,
                                                                                   const float* __restrict b,
                                                                                   float scale, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a[i] += scale * b[i];
}

}  // namespace

Tensor linear(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias) {
    Tensor y = Tensor::uninitialized({x.dim(0), w.dim(1)});
    MatmulShape shape = dense_matmul(x.dim(0), x.dim(1), w.dim(1));
    shape.has_bias = !bias.empty();
    backend.matmul(shape, x.ptr(), w.ptr(), bias.empty() ? nullptr : bias.ptr(), y.ptr());
    return y;
}

Tensor linear_out_in(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias) {
    Tensor y = Tensor::uninitialized({x.dim(0), w.dim(0)});
    MatmulShape shape = dense_matmul(x.dim(0), x.dim(1), w.dim(0));
    shape.w_strides[1] = 1, shape.w_strides[2] = x.dim(1);  // element (i, j) of the product's [k, n] at w[j, i]
    shape.has_bias = !bias.empty();
    backend.matmul(shape, x.ptr(), w.ptr(), bias.empty() ? nullptr : bias.ptr(), y.ptr());
    return y;
}

void activate_in_place(Tensor& x, Activation activation) {
    activate(x.ptr(), nullptr, static_cast<int64_t>(x.data.size()), activation);
}

void activate_and_gate(Tensor& x, const Tensor& gate, Activation activation) {
    if (gate.shape != x.shape)
        throw Error(ErrorKind::internal,
                    fmt::format("activate_and_gate: gate {} for {}", shape_string(gate.shape), shape_string(x.shape)));
    activate(x.ptr(), gate.ptr(), static_cast<int64_t>(x.data.size()), activation);
}

Tensor rms_normalized(const Tensor& x, const Tensor& weight, double epsilon, float offset) {
    const int64_t width = x.dim(x.rank() - 1), rows = static_cast<int64_t>(x.data.size()) / width;
    Tensor y = Tensor::uninitialized(x.shape);
    over_rows(rows, width, [&](int64_t t) {
        const float* row = x.ptr() + t * width;
        const double scale = 1.0 / std::sqrt(dot_in_double(row, row, width) / static_cast<double>(width) + epsilon);
        scale_row(row, scale, weight.ptr(), offset, y.ptr() + t * width, width);
    });
    return y;
}

Tensor rms_normalized_across_heads(const Tensor& x, const Tensor& weight, double epsilon) {
    const int64_t H = x.dim(0), T = x.dim(1), d_h = x.dim(2);
    Tensor y = Tensor::uninitialized(x.shape);
    over_rows(T, H * d_h, [&](int64_t t) {
        double squares = 0;
        for (int64_t h = 0; h < H; ++h) {
            const float* row = x.ptr() + (h * T + t) * d_h;
            squares += dot_in_double(row, row, d_h);
        }
        const double scale = 1.0 / std::sqrt(squares / static_cast<double>(H * d_h) + epsilon);
        for (int64_t h = 0; h < H; ++h)
            scale_row(x.ptr() + (h * T + t) * d_h, scale, weight.ptr() + h * d_h, 0.0f, y.ptr() + (h * T + t) * d_h,
                      d_h);
    });
    return y;
}

Tensor layer_normalized(const Tensor& x, const Tensor& weight, const Tensor& bias, double epsilon) {
    const int64_t T = x.dim(0), D = x.dim(1);
    Tensor y = Tensor::uninitialized({T, D});
    over_rows(T, D, [&](int64_t t) {
        const float* row = x.ptr() + t * D;
        const double mean = deviation_sum<1>(row, 0.0, D) / static_cast<double>(D);
        const double scale = 1.0 / std::sqrt(deviation_sum<2>(row, mean, D) / static_cast<double>(D) + epsilon);
        center_scale_row(row, mean, scale, weight.ptr(), bias.empty() ? nullptr : bias.ptr(), y.ptr() + t * D, D);
    });
    return y;
}

void add_in_place(Tensor& x, const Tensor& delta, float scale) {
    if (delta.shape != x.shape)
        throw Error(ErrorKind::internal,
                    fmt::format("add_in_place: {} added to {}", shape_string(delta.shape), shape_string(x.shape)));
    float* a = x.ptr();
    const float* b = delta.ptr();
    over_runs(static_cast<int64_t>(x.data.size()), [&](int64_t begin, int64_t end) {
        if (scale == 1.0f)
            add_run(a + begin, b + begin, end - begin);
        else
            add_scaled_run(a + begin, b + begin, scale, end - begin);
    });
}

}  // namespace attn_viz
