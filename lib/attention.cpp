// One multi-head attention layer, step by step, with every product on oneDNN's matmul.
// Buffers are head-major so that grouped-query attention is a plain batched product: the G = H/KV
// query heads sharing key/value head g are contiguous rows [g G T, (g+1) G T) of Q.
#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "error.hpp"
#include "masked_softmax.hpp"

namespace attn_viz {
namespace {

// z: [H, T, d_h] -> [T, H*d_h]
Tensor from_head_major(const Tensor& z) {
    const int64_t heads = z.dim(0), rows = z.dim(1), width = z.dim(2);
    Tensor out = Tensor::uninitialized({rows, heads * width});
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t r = 0; r < rows; ++r)
            std::copy_n(z.ptr() + (h * rows + r) * width, width, out.ptr() + r * heads * width + h * width);
    return out;
}

// x: [rows, D]; w: [D, n] -> [rows, n] (+ bias [n] when given)
Tensor project(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias) {
    Tensor y = Tensor::uninitialized({x.dim(0), w.dim(1)});
    MatmulShape shape = dense_matmul(x.dim(0), x.dim(1), w.dim(1));
    shape.has_bias = !bias.empty();
    backend.matmul(shape, x.ptr(), w.ptr(), bias.empty() ? nullptr : bias.ptr(), y.ptr());
    return y;
}

// x: [rows, D]; w: [D, heads*d_h] (head h = columns [h d_h, (h+1) d_h)); bias: [heads*d_h] or
// empty -> [heads, rows, d_h], head-major. One dense product (bias included), then a transpose:
// read through a strided per-head view, the same product sends oneDNN 2.6 to gemm:jit, whose
// first call spends ~25 ms generating code; the dense shape is shared with the output projection.
Tensor project_heads(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias, int64_t d_h) {
    const int64_t rows = x.dim(0), heads = w.dim(1) / d_h;
    const Tensor token_major = project(backend, x, w, bias);  // [rows, heads*d_h]
    Tensor y = Tensor::uninitialized({heads, rows, d_h});
#pragma omp parallel for schedule(static)
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t r = 0; r < rows; ++r)
            std::copy_n(token_major.ptr() + r * heads * d_h + h * d_h, d_h, y.ptr() + (h * rows + r) * d_h);
    return y;
}

}  // namespace

void apply_rope(Tensor& x, RopeStyle style, double base, int64_t first_position) {
    if (style == RopeStyle::none) return;
    const int64_t heads = x.dim(0), rows = x.dim(1), d_head = x.dim(2), half = d_head / 2;
    for (int64_t t = 0; t < rows; ++t) {
        const double position = static_cast<double>(first_position + t);
        for (int64_t i = 0; i < half; ++i) {
            const double angle = position * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d_head));
            const double c = std::cos(angle), s = std::sin(angle);
            // Pair (a, b): interleaved (2i, 2i+1); half-split (i, i + d_h/2).
            const int64_t a = style == RopeStyle::interleaved ? 2 * i : i;
            const int64_t b = style == RopeStyle::interleaved ? 2 * i + 1 : i + half;
            for (int64_t h = 0; h < heads; ++h) {
                float* v = x.ptr() + (h * rows + t) * d_head;
                const double x0 = v[a], x1 = v[b];
                v[a] = static_cast<float>(x0 * c - x1 * s);
                v[b] = static_cast<float>(x0 * s + x1 * c);
            }
        }
    }
}

AttentionLayer::AttentionLayer(OnednnBackend& backend, const LayerWeights& weights)
    : backend_(backend), weights_(weights) {
    validate_layer(weights_, "attention layer");
}

void AttentionLayer::recycle(LayerResult&& finished) {
    if (finished.attention.data.capacity() > spare_map_.data.capacity()) spare_map_ = std::move(finished.attention);
}

LayerResult AttentionLayer::run(const AttentionRequest& request) {
    const LayerWeights& w = weights_;
    const Tensor& x = *request.input;
    const Tensor& c = request.context ? *request.context : x;
    const int64_t H = w.num_heads, KV = w.num_kv_heads, G = H / KV, d_h = w.d_head;
    const int64_t T = x.dim(0), S = c.dim(0);
    if (x.rank() != 2 || x.dim(1) != w.d_model || c.rank() != 2 || c.dim(1) != w.d_model)
        throw Error(ErrorKind::bad_input, "input has shape " + shape_string(x.shape) + ", the layer needs [T, " +
                                              std::to_string(w.d_model) + "]");
    if (T == 0 || S == 0) throw Error(ErrorKind::bad_input, "input has no tokens");
    if (!request.key_excluded.empty() && static_cast<int64_t>(request.key_excluded.size()) != S)
        throw Error(ErrorKind::bad_input, "padding mask has " + std::to_string(request.key_excluded.size()) +
                                              " entries for " + std::to_string(S) + " keys");

    LayerResult r;
    r.visibility = {T, S, w.causal && !request.context, request.key_excluded};

    // Step 1: projections Q = x W_Q + b_Q, K = c W_K + b_K, V = c W_V + b_V, each one product
    // batched over heads that writes head-major [heads, rows, d_h]; rotary embedding on Q and K.
    Tensor q = project_heads(backend_, x, w.w_q, w.b_q, d_h);  // [H, T, d_h] = [KV, G*T, d_h]
    Tensor k = project_heads(backend_, c, w.w_k, w.b_k, d_h);  // [KV, S, d_h]
    const Tensor v = project_heads(backend_, c, w.w_v, w.b_v, d_h);  // [KV, S, d_h]
    apply_rope(q, w.rope, w.rope_base);
    apply_rope(k, w.rope, w.rope_base);

    // Step 2: scaled scores for all heads in one product batched over KV groups:
    // scores[g] = Q[g] K_g^T / sqrt(d_h), with K_g^T a transposed view of K (no copy).
    if (static_cast<int64_t>(spare_map_.data.capacity()) >= H * T * S) {
        r.attention = std::move(spare_map_);
        r.attention.shape = {H, T, S};
        r.attention.data.resize(static_cast<size_t>(H * T * S));  // within capacity: no allocation, no zeroing
    } else {
        r.attention = Tensor::uninitialized({H, T, S});
    }
    spare_map_ = Tensor();
    MatmulShape scores;
    scores.batch = KV, scores.m = G * T, scores.k = d_h, scores.n = S;
    scores.a_strides[0] = G * T * d_h, scores.a_strides[1] = d_h, scores.a_strides[2] = 1;
    scores.w_strides[0] = S * d_h, scores.w_strides[1] = 1, scores.w_strides[2] = d_h;
    scores.c_strides[0] = G * T * S, scores.c_strides[1] = S, scores.c_strides[2] = 1;
    scores.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_h)));
    backend_.matmul(scores, q.ptr(), k.ptr(), nullptr, r.attention.ptr());

    // Step 3: masks (causal future, padding), each row's logit margin and the softmax over the
    // visible keys, in one pass over each row.
    r.logit_margin = masked_softmax(r.attention, r.visibility);

    // Step 4: head outputs Z[g] = P[g] V_g, batched over KV groups, then concatenated per token.
    Tensor z = Tensor::uninitialized({H, T, d_h});
    MatmulShape pv;
    pv.batch = KV, pv.m = G * T, pv.k = S, pv.n = d_h;
    pv.a_strides[0] = G * T * S, pv.a_strides[1] = S, pv.a_strides[2] = 1;
    pv.w_strides[0] = S * d_h, pv.w_strides[1] = d_h, pv.w_strides[2] = 1;
    pv.c_strides[0] = G * T * d_h, pv.c_strides[1] = d_h, pv.c_strides[2] = 1;
    backend_.matmul(pv, r.attention.ptr(), v.ptr(), nullptr, z.ptr());
    r.context = from_head_major(z);  // [T, H*d_h]

    // Step 5: output projection, and each head's share of it.
    r.output = project(backend_, r.context, w.w_o, w.b_o);
    if (request.with_contributions) {
        if (!output_shares_) output_shares_ = std::make_unique<HeadOutputShares>(backend_, w.w_o, H);
        output_shares_->summarise(backend_, z, r.context, r.contribution_norms, r.contribution_gram);
    }
    return r;
}

}  // namespace attn_viz
