// The forward pass's element-by-element kernels (dense_ops, block_ops, apply_rope) against their
// definitions in double, on fresh random data of odd sizes, one row and T = 1, large enough that
// the parallel paths run too.
#include <cmath>
#include <limits>
#include <tuple>

#include <doctest/doctest.h>

#include "attention.hpp"
#include "block_ops.hpp"
#include "dense_ops.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// The shapes [rows, width] every kernel is tried on: one row, one column, odd sizes, and sizes
// past the point where the passes split over threads.
const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1},    {1, 7},     {3, 1},    {5, 33},
                                                         {1, 4099}, {257, 129}, {37, 1031}};

// Relative to the larger of |want| and `floor`.
double relative_error(double got, double want, double floor = 1e-6) {
    return std::fabs(got - want) / std::max(std::fabs(want), floor);
}

double silu(double a) { return a / (1.0 + std::exp(-a)); }
double gelu_erf(double a) { return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0))); }
double gelu_tanh(double a) { return 0.5 * a * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a))); }
double relu(double a) { return a > 0 ? a : 0.0; }

double activation_of(Activation activation, double a) {
    switch (activation) {
        case Activation::silu:
            return silu(a);
        case Activation::relu:
            return relu(a);
        case Activation::gelu_erf:
            return gelu_erf(a);
        case Activation::gelu_tanh:
            return gelu_tanh(a);
    }
    return 0;
}

}  // namespace

TEST_SUITE("unit") {

TEST_CASE("rms_normalized matches the double definition, with offsets 0 and 1, on [rows, width] and [H, T, d_h]") {
    for (const auto& [shape_rows, shape_width] : shapes)
        for (const float offset : {0.0f, 1.0f}) {
            const int64_t rows = shape_rows, width = shape_width;
            CAPTURE(rows);
            CAPTURE(width);
            CAPTURE(offset);
            const Tensor x = random_tensor({rows, width}, 3.0f), weight = random_tensor({width});
            const double epsilon = 1e-5;
            const Tensor y = rms_normalized(x, weight, epsilon, offset);
            REQUIRE(y.shape == x.shape);
            double worst = 0;
            for (int64_t t = 0; t < rows; ++t) {
                double squares = 0;
                for (int64_t i = 0; i < width; ++i) squares += double(x.data[t * width + i]) * x.data[t * width + i];
                const double scale = 1.0 / std::sqrt(squares / width + epsilon);
                for (int64_t i = 0; i < width; ++i) {
                    const double want = x.data[t * width + i] * scale * (double(offset) + weight.data[i]);
                    worst = std::max(worst, relative_error(y.data[t * width + i], want));
                }
            }
            CHECK(worst < 1e-6);
        }
    const Tensor heads = random_tensor({3, 5, 16}), weight = random_tensor({16});
    const Tensor y = rms_normalized(heads, weight, 1e-6);
    Tensor rows = heads;
    rows.shape = {15, 16};
    const Tensor flat = rms_normalized(rows, weight, 1e-6);
    CHECK(y.shape == heads.shape);
    CHECK(y.data == flat.data);
}

TEST_CASE("rms_normalized_across_heads normalises each token's values of every head as one vector") {
    // [H, T, d_h]: one head (where it is the per-head norm), one token, odd sizes, many tokens.
    for (const auto& [H, T, d_h] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{1, 1, 1}, {1, 4, 6}, {3, 1, 5}, {4, 7, 6}, {2, 3001, 8}}) {
        CAPTURE(H);
        CAPTURE(T);
        CAPTURE(d_h);
        const Tensor x = random_tensor({H, T, d_h}, 3.0f), weight = random_tensor({H * d_h});
        const double epsilon = 1e-5;
        const Tensor y = rms_normalized_across_heads(x, weight, epsilon);
        REQUIRE(y.shape == x.shape);
        double worst = 0;
        for (int64_t t = 0; t < T; ++t) {
            double squares = 0;
            for (int64_t h = 0; h < H; ++h)
                for (int64_t i = 0; i < d_h; ++i) squares += std::pow(double(x.data[(h * T + t) * d_h + i]), 2);
            const double scale = 1.0 / std::sqrt(squares / static_cast<double>(H * d_h) + epsilon);
            for (int64_t h = 0; h < H; ++h)
                for (int64_t i = 0; i < d_h; ++i) {
                    const int64_t at = (h * T + t) * d_h + i;
                    worst = std::max(worst, relative_error(y.data[at], x.data[at] * scale * weight.data[h * d_h + i]));
                }
        }
        CHECK(worst < 1e-6);
        if (H == 1) CHECK(y.data == rms_normalized(x, weight, epsilon).data);
    }
}

TEST_CASE("normalized (layer norm) matches the double definition, biased variance as torch") {
    for (const auto& [shape_rows, shape_width] : shapes) {
        const int64_t rows = shape_rows, width = shape_width;
        CAPTURE(rows);
        CAPTURE(width);
        Tensor x = random_tensor({rows, width}, 2.0f);
        for (float& v : x.data) v += 5.0f;  // an offset the mean must remove
        const NormWeights norm{random_tensor({width}), random_tensor({width})};
        const double epsilon = 1e-12;
        const Tensor y = normalized(x, norm, NormKind::layer_norm, epsilon);
        double worst = 0;
        for (int64_t t = 0; t < rows; ++t) {
            double sum = 0, squares = 0;
            for (int64_t i = 0; i < width; ++i) sum += x.data[t * width + i];
            const double mean = sum / width;
            for (int64_t i = 0; i < width; ++i)
                squares += (x.data[t * width + i] - mean) * (x.data[t * width + i] - mean);
            const double scale = 1.0 / std::sqrt(squares / width + epsilon);
            for (int64_t i = 0; i < width; ++i) {
                const double want = (x.data[t * width + i] - mean) * scale * norm.weight.data[i] + norm.bias.data[i];
                worst = std::max(worst, std::fabs(y.data[t * width + i] - want) / (1.0 + std::fabs(want)));
            }
        }
        CHECK(worst < 1e-6);
    }
}

TEST_CASE("activations, alone and gated, match the double definitions") {
    for (const Activation activation :
         {Activation::silu, Activation::relu, Activation::gelu_erf, Activation::gelu_tanh})
        for (const auto& [shape_rows, shape_width] : shapes) {
            const int64_t rows = shape_rows, width = shape_width;
            CAPTURE(int(activation));
            CAPTURE(rows);
            CAPTURE(width);
            const Tensor x = random_tensor({rows, width}, 12.0f), gate = random_tensor({rows, width}, 2.0f);
            Tensor alone = x, gated = x;
            activate_in_place(alone, activation);
            activate_and_gate(gated, gate, activation);
            double worst = 0;
            for (size_t i = 0; i < x.data.size(); ++i) {
                const double want = activation_of(activation, x.data[i]);
                // 1e-6 absolute near zero, where GELU's tail is a difference of nearly equal terms.
                worst = std::max(worst, relative_error(alone.data[i], want, 1.0));
                worst = std::max(worst, relative_error(gated.data[i], want * gate.data[i], 1.0));
            }
            CHECK(worst < 1e-6);
        }
}

TEST_CASE("SiLU keeps the limits of x / (1 + e^-x): large magnitudes, zero, infinities, NaN") {
    const float inf = std::numeric_limits<float>::infinity();
    Tensor x({8});
    x.data = {0.0f, -0.0f, 100.0f, -100.0f, 88.5f, -88.5f, inf, std::numeric_limits<float>::quiet_NaN()};
    activate_in_place(x, Activation::silu);
    CHECK(x.data[0] == 0.0f);
    CHECK(x.data[1] == 0.0f);
    CHECK(x.data[2] == 100.0f);
    CHECK(std::fabs(x.data[3]) < 1e-30f);
    CHECK(x.data[4] == 88.5f);
    CHECK(std::fabs(x.data[5]) < 1e-30f);
    CHECK(x.data[6] == inf);
    CHECK(std::isnan(x.data[7]));
}

TEST_CASE("linear_out_in multiplies by a [n, k] matrix's transpose, with and without a bias, as the double product") {
    // [rows, k, n]: one row and one output, odd sizes, a wide product (n >> k) and a deep one.
    for (const auto& [rows, k, n] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {1, 7, 3}, {5, 33, 17}, {3, 16, 1031}, {37, 517, 9}}) {
        CAPTURE(rows);
        CAPTURE(k);
        CAPTURE(n);
        const Tensor x = random_tensor({rows, k}), w = random_tensor({n, k}), bias = random_tensor({n});
        OnednnBackend backend;
        for (const bool with_bias : {false, true}) {
            const Tensor y = linear_out_in(backend, x, w, with_bias ? bias : Tensor{});
            REQUIRE(y.shape == std::vector<int64_t>{rows, n});
            double worst = 0;
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t j = 0; j < n; ++j) {
                    double want = with_bias ? bias.data[j] : 0.0, scale = std::fabs(want);
                    for (int64_t i = 0; i < k; ++i) {
                        want += double(x.data[r * k + i]) * w.data[j * k + i];
                        scale += std::fabs(double(x.data[r * k + i]) * w.data[j * k + i]);
                    }
                    worst = std::max(worst, std::fabs(y.data[r * n + j] - want) / scale);
                }
            CHECK(worst < 1e-6);
        }
        for (const std::string& impl : backend.implementations()) CHECK(impl.find("ref") == std::string::npos);
    }
}

TEST_CASE("the backend keeps at most matmul_cache_capacity primitives, and a dropped shape still multiplies right") {
    OnednnBackend backend;
    const int64_t k = 3, n = 2, shapes = static_cast<int64_t>(matmul_cache_capacity) + 40;
    const Tensor x = random_tensor({shapes, k}), w = random_tensor({k, n});
    // The product of x's first `rows` rows, checked against the double one.
    const auto check_rows = [&](int64_t rows) {
        std::vector<float> y(static_cast<size_t>(rows * n));
        backend.matmul(dense_matmul(rows, k, n), x.ptr(), w.ptr(), nullptr, y.data());
        double worst = 0;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < n; ++j) {
                double want = 0;
                for (int64_t i = 0; i < k; ++i) want += double(x.data[r * k + i]) * w.data[i * n + j];
                worst = std::max(worst, std::fabs(y[r * n + j] - want));
            }
        return worst;
    };
    for (int64_t rows = 1; rows <= shapes; ++rows) CHECK(check_rows(rows) < 1e-5);
    CHECK(backend.implementations().size() == matmul_cache_capacity);
    CHECK(check_rows(1) < 1e-5);  // the least recently used, dropped and made again
    CHECK(backend.implementations().size() == matmul_cache_capacity);
}

TEST_CASE("a tall product reads its row-major weights repacked, a short one directly, both as the double product") {
    // [m, k] x [k, n] with the weights' rows padded apart (ld = n + 3): 1601 rows (past the
    // backend's repacking threshold, 1536) and the same rows in products of 400; with a bias, then
    // with a scale.
    const int64_t m = 1601, k = 97, n = 131, ld = n + 3, chunk = 400;
    const Tensor x = random_tensor({m, k}), w = random_tensor({k, ld}), bias = random_tensor({n});
    for (const bool with_bias : {true, false}) {
        CAPTURE(with_bias);
        const float scale = with_bias ? 1.0f : 0.37f;
        auto shape_of = [&](int64_t rows) {
            MatmulShape s = dense_matmul(rows, k, n);
            s.w_strides[0] = k * ld, s.w_strides[1] = ld;
            s.scale = scale, s.has_bias = with_bias;
            return s;
        };
        // Relative to the sum of the terms' magnitudes, the worst entry of y [m, n] against the double product.
        auto worst_error = [&](const std::vector<float>& y) {
            double worst = 0;
            for (int64_t r = 0; r < m; ++r)
                for (int64_t j = 0; j < n; ++j) {
                    double want = with_bias ? bias.data[j] : 0.0, size = std::fabs(want);
                    for (int64_t i = 0; i < k; ++i) {
                        want += double(scale) * x.data[r * k + i] * w.data[i * ld + j];
                        size += std::fabs(double(scale) * x.data[r * k + i] * w.data[i * ld + j]);
                    }
                    worst = std::max(worst, std::fabs(y[r * n + j] - want) / size);
                }
            return worst;
        };
        OnednnBackend tall_backend, short_backend;
        std::vector<float> tall(static_cast<size_t>(m * n)), parts(static_cast<size_t>(m * n));
        tall_backend.matmul(shape_of(m), x.ptr(), w.ptr(), bias.ptr(), tall.data());
        for (int64_t r0 = 0; r0 < m; r0 += chunk) {
            const int64_t rows = std::min(chunk, m - r0);
            short_backend.matmul(shape_of(rows), x.ptr() + r0 * k, w.ptr(), bias.ptr(), parts.data() + r0 * n);
        }
        CHECK(worst_error(tall) < 1e-6);
        CHECK(worst_error(parts) < 1e-6);
        const std::vector<std::string> tall_impl = tall_backend.implementations();
        REQUIRE(tall_impl.size() == 1);
        CHECK(tall_impl[0].find(", weights repacked") != std::string::npos);
        CHECK(tall_impl[0].find("ref") == std::string::npos);
        for (const std::string& impl : short_backend.implementations()) {
            CHECK(impl.find("repacked") == std::string::npos);
            CHECK(impl.find("ref") == std::string::npos);
        }
    }
}

TEST_CASE("add_in_place adds element by element and refuses a different shape") {
    for (const auto& [rows, width] : shapes) {
        Tensor x = random_tensor({rows, width});
        const Tensor before = x, delta = random_tensor({rows, width});
        add_in_place(x, delta);
        bool exact = true;
        for (size_t i = 0; i < x.data.size(); ++i) exact = exact && x.data[i] == before.data[i] + delta.data[i];
        CHECK(exact);
    }
    Tensor x = random_tensor({2, 3});
    CHECK_THROWS(add_in_place(x, random_tensor({3, 2})));
    CHECK_THROWS(activate_and_gate(x, random_tensor({6}), Activation::silu));
}

TEST_CASE("apply_rope turns each pair by position x frequency, both styles, partial rotation, T = 1") {
    struct Case {
        int64_t heads, T, d_h, half, first;
    };
    for (const Case c : {Case{1, 1, 2, 1, 0}, Case{3, 1, 8, 4, 17}, Case{2, 37, 10, 3, 0}, Case{5, 129, 64, 32, 2}})
        for (const RopeStyle style : {RopeStyle::interleaved, RopeStyle::half_split}) {
            CAPTURE(c.heads);
            CAPTURE(c.T);
            CAPTURE(c.d_h);
            CAPTURE(int(style));
            std::vector<double> frequencies;
            for (int64_t i = 0; i < c.half; ++i) frequencies.push_back(std::pow(10000.0, -2.0 * i / (2 * c.half)));
            const Tensor x = random_tensor({c.heads, c.T, c.d_h});
            Tensor y = x;
            apply_rope(y, style, frequencies, c.first);
            Tensor want = x;
            double worst = 0;
            for (int64_t h = 0; h < c.heads; ++h)
                for (int64_t t = 0; t < c.T; ++t) {
                    const float* in = x.ptr() + (h * c.T + t) * c.d_h;
                    float* out = want.ptr() + (h * c.T + t) * c.d_h;
                    for (int64_t i = 0; i < c.half; ++i) {
                        const int64_t a = style == RopeStyle::interleaved ? 2 * i : i;
                        const int64_t b = style == RopeStyle::interleaved ? 2 * i + 1 : i + c.half;
                        const double angle = double(c.first + t) * frequencies[size_t(i)];
                        out[a] = float(in[a] * std::cos(angle) - in[b] * std::sin(angle));
                        out[b] = float(in[a] * std::sin(angle) + in[b] * std::cos(angle));
                    }
                }
            for (size_t i = 0; i < y.data.size(); ++i)
                worst = std::max(worst, double(std::fabs(y.data[i] - want.data[i])));
            CHECK(worst < 1e-6);
        }
}

}  // TEST_SUITE("unit")
