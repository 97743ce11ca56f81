// A plain double-precision multi-head attention, written straight from the formulas, that the
// oneDNN path is checked against. No shortcuts shared with lib/attention.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "attention.hpp"
#include "support.hpp"

namespace test_support {

struct ReferenceResult {
    std::vector<double> attention;    // [H, T, S]
    std::vector<double> margin;       // [H, T]
    std::vector<double> context;      // [T, H*d_h]
    std::vector<double> output;       // [T, D]
    std::vector<double> norms;        // [H, T]
    std::vector<double> gram;         // [H, H]
    std::vector<double> value_norms;  // [H, S] ||v_j W_O^h||, v_j key j's value vector of head h's KV head
};

// x: [T, D]; c: [S, D] (x itself for self-attention); key_excluded: [S] or empty.
inline ReferenceResult reference_attention(const attn_viz::LayerWeights& w, const attn_viz::Tensor& x,
                                           const attn_viz::Tensor* c_or_null,
                                           const std::vector<uint8_t>& key_excluded) {
    using attn_viz::RopeStyle;
    const attn_viz::Tensor& c = c_or_null ? *c_or_null : x;
    const int64_t T = x.dim(0), S = c.dim(0), D = w.d_model, H = w.num_heads, KV = w.num_kv_heads, dh = w.d_head;
    const bool causal = w.causal && !c_or_null;
    auto linear = [&](const attn_viz::Tensor& in, const attn_viz::Tensor& W, const attn_viz::Tensor& b) {
        const int64_t rows = in.dim(0), n = W.dim(1), k = W.dim(0);
        std::vector<double> out(static_cast<size_t>(rows * n));
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < n; ++j) {
                double s = b.empty() ? 0.0 : b.data[j];
                for (int64_t i = 0; i < k; ++i) s += double(in.data[r * k + i]) * W.data[i * n + j];
                out[r * n + j] = s;
            }
        return out;
    };
    auto rope = [&](std::vector<double>& m, int64_t rows, int64_t heads) {
        if (w.rope == RopeStyle::none) return;
        const int64_t rotated = w.rope_dims ? w.rope_dims : dh;  // features 0..rotated-1 turn
        for (int64_t p = 0; p < rows; ++p)
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t i = 0; i < rotated / 2; ++i) {
                    const double theta = p / std::pow(w.rope_base, 2.0 * i / rotated);
                    const int64_t a = w.rope == RopeStyle::interleaved ? 2 * i : i;
                    const int64_t b = w.rope == RopeStyle::interleaved ? 2 * i + 1 : i + rotated / 2;
                    double& x0 = m[p * heads * dh + h * dh + a];
                    double& x1 = m[p * heads * dh + h * dh + b];
                    const double n0 = x0 * std::cos(theta) - x1 * std::sin(theta);
                    const double n1 = x0 * std::sin(theta) + x1 * std::cos(theta);
                    x0 = n0, x1 = n1;
                }
    };
    std::vector<double> q = linear(x, w.w_q, w.b_q), k = linear(c, w.w_k, w.b_k), v = linear(c, w.w_v, w.b_v);
    rope(q, T, H);
    rope(k, S, KV);

    ReferenceResult r;
    r.attention.assign(static_cast<size_t>(H * T * S), 0.0);
    r.margin.assign(static_cast<size_t>(H * T), 0.0);
    r.context.assign(static_cast<size_t>(T * H * dh), 0.0);
    auto visible = [&](int64_t i, int64_t j) {
        return (!causal || j <= i) && (key_excluded.empty() || !key_excluded[j]);
    };
    for (int64_t h = 0; h < H; ++h) {
        const int64_t g = h / (H / KV);
        for (int64_t i = 0; i < T; ++i) {
            std::vector<double> s;
            std::vector<int64_t> keys;
            for (int64_t j = 0; j < S; ++j) {
                if (!visible(i, j)) continue;
                double dot = 0;
                for (int64_t d = 0; d < dh; ++d) dot += q[i * H * dh + h * dh + d] * k[j * KV * dh + g * dh + d];
                s.push_back(dot / std::sqrt(double(dh)));
                keys.push_back(j);
            }
            if (s.empty()) continue;
            std::vector<double> sorted = s;
            std::sort(sorted.rbegin(), sorted.rend());
            r.margin[h * T + i] = sorted.size() >= 2 ? sorted[0] - sorted[1] : 0.0;
            double total = 0;
            for (double& e : s) total += (e = std::exp(e - sorted[0]));
            for (size_t n = 0; n < keys.size(); ++n) r.attention[(h * T + i) * S + keys[n]] = s[n] / total;
            for (int64_t d = 0; d < dh; ++d) {
                double acc = 0;
                for (int64_t j = 0; j < S; ++j) acc += r.attention[(h * T + i) * S + j] * v[j * KV * dh + g * dh + d];
                r.context[i * H * dh + h * dh + d] = acc;
            }
        }
    }
    r.value_norms.assign(static_cast<size_t>(H * S), 0.0);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t j = 0; j < S; ++j) {
            double square = 0;
            for (int64_t col = 0; col < D; ++col) {
                double s = 0;
                for (int64_t d = 0; d < dh; ++d)
                    s += v[j * KV * dh + (h / (H / KV)) * dh + d] * w.w_o.data[(h * dh + d) * D + col];
                square += s * s;
            }
            r.value_norms[h * S + j] = std::sqrt(square);
        }
    r.output.assign(static_cast<size_t>(T * D), 0.0);
    r.norms.assign(static_cast<size_t>(H * T), 0.0);
    r.gram.assign(static_cast<size_t>(H * H), 0.0);
    std::vector<double> share(static_cast<size_t>(H * D));
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t h = 0; h < H; ++h)
            for (int64_t j = 0; j < D; ++j) {
                double s = 0;
                for (int64_t d = 0; d < dh; ++d)
                    s += r.context[t * H * dh + h * dh + d] * w.w_o.data[(h * dh + d) * D + j];
                share[h * D + j] = s;
            }
        for (int64_t j = 0; j < D; ++j) {
            double s = w.b_o.empty() ? 0.0 : w.b_o.data[j];
            for (int64_t h = 0; h < H; ++h) s += share[h * D + j];
            r.output[t * D + j] = s;
        }
        for (int64_t a = 0; a < H; ++a)
            for (int64_t b = 0; b < H; ++b) {
                double dot = 0;
                for (int64_t j = 0; j < D; ++j) dot += share[a * D + j] * share[b * D + j];
                r.gram[a * H + b] += dot;
                if (a == b) r.norms[a * T + t] = std::sqrt(dot);
            }
    }
    return r;
}

// A random layer: D, H, KV heads, d_h = D / H unless given.
inline attn_viz::LayerWeights random_layer(int64_t D, int64_t H, int64_t KV, bool causal, bool biases,
                                           attn_viz::RopeStyle rope = attn_viz::RopeStyle::none) {
    attn_viz::LayerWeights w;
    w.d_model = D, w.num_heads = H, w.num_kv_heads = KV, w.d_head = D / H, w.causal = causal, w.rope = rope;
    const int64_t q = H * w.d_head, kv = KV * w.d_head;
    const float scale = 1.0f / std::sqrt(float(D));
    w.w_q = random_tensor({D, q}, 2 * scale);
    w.w_k = random_tensor({D, kv}, 2 * scale);
    w.w_v = random_tensor({D, kv}, scale);
    w.w_o = random_tensor({q, D}, scale);
    if (biases) {
        w.b_q = random_tensor({q}, 0.3f);
        w.b_k = random_tensor({kv}, 0.3f);
        w.b_v = random_tensor({kv}, 0.3f);
        w.b_o = random_tensor({D}, 0.3f);
    }
    return w;
}

}  // namespace test_support
