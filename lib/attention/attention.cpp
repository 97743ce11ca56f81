// One multi-head attention layer, step by step, with every product on oneDNN's matmul.
// Buffers are head-major so that grouped-query attention is a plain batched product: the G = H/KV
// query heads sharing key/value head g are contiguous rows [g G T, (g+1) G T) of Q.
#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "dense_ops.hpp"
#include "error.hpp"
#include "head_output_shares.hpp"
#include "masked_softmax.hpp"
#include "onednn_backend.hpp"
#include "parallel_for.hpp"

namespace attn_viz {
namespace {

// How Steps 2-4 of AttentionLayer::run walk the map: `groups` KV groups of `group_rows` query
// rows per product, `rows` of them at a time (all of them when groups > 1), each step at most
// about 2 MB of scores so that it is still in cache for the softmax and P V.
struct MapSteps {
    int64_t groups = 1, group_rows = 0, rows = 0;
};

MapSteps map_steps(int64_t kv_groups, int64_t group_rows, int64_t keys) {
    constexpr int64_t step_floats = int64_t{1} << 19;
    MapSteps step{1, group_rows, std::clamp<int64_t>(step_floats / keys, 1, group_rows)};
    // Whole groups per step when they fit: a divisor of the group count, so every step has one
    // shape (each new shape costs oneDNN a JIT compilation).
    for (int64_t groups = std::min(kv_groups, step_floats / std::max<int64_t>(1, group_rows * keys)); groups > 1;
         --groups)
        if (kv_groups % groups == 0) return {groups, group_rows, group_rows};
    return step;
}

// rows: [count, from] packed at the start of a [count, to] buffer -> rows of `to` floats, the
// keys past `from` zero. In place, last row first (a row never moves onto an unread one).
void spread_rows(float* rows, int64_t count, int64_t from, int64_t to) {
    for (int64_t n = count - 1; n >= 0; --n) {
        std::memmove(rows + n * to, rows + n * from, static_cast<size_t>(from) * sizeof(float));
        std::fill(rows + n * to + from, rows + (n + 1) * to, 0.0f);
    }
}

// `batch` products of [m, k] x [k, n] whose a and c operands are consecutive groups of
// `group_rows` rows (row-major, dense rows); w's strides are left for the caller. One product
// keeps dense batch strides (so must the caller's w): with any other, oneDNN 2.6 leaves brgemm
// for gemm:jit.
MatmulShape batched_matmul(int64_t batch, int64_t m, int64_t k, int64_t n, int64_t group_rows) {
    MatmulShape s = dense_matmul(m, k, n);
    s.batch = batch;
    if (batch > 1) s.a_strides[0] = group_rows * k, s.c_strides[0] = group_rows * n;
    return s;
}

// scores: [n] -> cap * tanh(scores / cap), in place.
void soft_cap(float* scores, int64_t n, double cap) {
#pragma omp parallel for schedule(static) if (n > parallel_min_values)
    for (int64_t i = 0; i < n; ++i) scores[i] = static_cast<float>(cap * std::tanh(scores[i] / cap));
}

// rows: `count` rows of `keys` scores (dense), rows [first, first + count) of an [H*T, S] map;
// bias: [H, T, S] -> each score plus its bias, in place.
void add_score_bias(float* rows, int64_t first, int64_t count, int64_t keys, const Tensor& bias) {
    const int64_t S = bias.dim(2);
    for (int64_t n = 0; n < count; ++n) {
        const float* b = bias.ptr() + (first + n) * S;
        for (int64_t j = 0; j < keys; ++j) rows[n * keys + j] += b[j];
    }
}

// z: [H, T, d_h] -> [T, H*d_h]
Tensor from_head_major(const Tensor& z) {
    const int64_t heads = z.dim(0), rows = z.dim(1), width = z.dim(2);
    Tensor out = Tensor::uninitialized({rows, heads * width});
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t r = 0; r < rows; ++r)
            std::copy_n(z.ptr() + (h * rows + r) * width, width, out.ptr() + r * heads * width + h * width);
    return out;
}

// x: [rows, D]; w: [D, heads*d_h] (head h = columns [h d_h, (h+1) d_h)); bias: [heads*d_h] or
// empty -> [heads, rows, d_h], head-major. One dense product (bias included), then a transpose:
// read through a strided per-head view, the same product sends oneDNN 2.6 to gemm:jit, whose
// first call spends ~25 ms generating code; the dense shape is shared with the output projection.
Tensor project_heads(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias, int64_t d_h) {
    const int64_t rows = x.dim(0), heads = w.dim(1) / d_h;
    const Tensor token_major = linear(backend, x, w, bias);  // [rows, heads*d_h]
    Tensor y = Tensor::uninitialized({heads, rows, d_h});
#pragma omp parallel for schedule(static) if (heads * rows * d_h > parallel_min_values)
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t r = 0; r < rows; ++r)
            std::copy_n(token_major.ptr() + r * heads * d_h + h * d_h, d_h, y.ptr() + (h * rows + r) * d_h);
    return y;
}

}  // namespace

void apply_rope(Tensor& x, RopeStyle style, const std::vector<double>& inverse_frequencies, int64_t first_position) {
    if (style == RopeStyle::none) return;
    const int64_t heads = x.dim(0), rows = x.dim(1), d_head = x.dim(2);
    const int64_t half = static_cast<int64_t>(inverse_frequencies.size());
    // Positions in parallel: each writes only its own rows of every head.
#pragma omp parallel for schedule(static) if (rows * half * heads > parallel_min_values)
    for (int64_t t = 0; t < rows; ++t) {
        const double position = static_cast<double>(first_position + t);
        for (int64_t i = 0; i < half; ++i) {
            const double angle = position * inverse_frequencies[static_cast<size_t>(i)];
            const double c = std::cos(angle), s = std::sin(angle);
            // Pair (a, b): interleaved (2i, 2i+1); half-split (i, i + rotated/2).
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
    rope_frequencies_ = rope_inverse_frequencies(weights_);
}

AttentionLayer::~AttentionLayer() = default;

Tensor AttentionLayer::take_map_buffer(const std::vector<int64_t>& shape) {
    const int64_t size = element_count(shape, "an attention map");
    Tensor map;
    if (static_cast<int64_t>(spare_map_.data.capacity()) >= size) {
        map = std::move(spare_map_);
        map.shape = shape;
        map.data.resize(static_cast<size_t>(size));  // within capacity: no allocation, no zeroing
    } else {
        map = Tensor::uninitialized(shape);
    }
    spare_map_ = Tensor();
    return map;
}

void AttentionLayer::recycle(LayerResult&& finished) { recycle(std::move(finished.attention)); }

void AttentionLayer::recycle(Tensor&& map) {
    if (map.data.capacity() > spare_map_.data.capacity()) spare_map_ = std::move(map);
}

LayerResult AttentionLayer::run(const AttentionRequest& request) {
    const LayerWeights& w = weights_;
    const Tensor& x = *request.input;
    const Tensor& c = request.context ? *request.context : x;
    const int64_t H = w.num_heads, KV = w.num_kv_heads, G = H / KV, d_h = w.d_head;
    const int64_t T = x.dim(0), S = c.dim(0);
    if (x.rank() != 2 || x.dim(1) != w.d_model || c.rank() != 2 || c.dim(1) != w.d_model)
        throw Error(ErrorKind::bad_input,
                    fmt::format("input has shape {}, the layer needs [T, {}]", shape_string(x.shape), w.d_model));
    if (T == 0 || S == 0) throw Error(ErrorKind::bad_input, "input has no tokens");
    if (!request.key_excluded.empty() && static_cast<int64_t>(request.key_excluded.size()) != S)
        throw Error(ErrorKind::bad_input,
                    fmt::format("padding mask has {} entries for {} keys", request.key_excluded.size(), S));
    if (request.score_bias && request.score_bias->shape != std::vector<int64_t>{H, T, S})
        throw Error(ErrorKind::internal, fmt::format("score bias has shape {} for a map of {}",
                                                     shape_string(request.score_bias->shape), shape_string({H, T, S})));

    LayerResult r;
    r.visibility = {T,
                    S,
                    w.causal && !request.context,
                    request.key_excluded,
                    w.causal && !request.context ? w.sliding_window : 0,
                    !request.context};

    // Step 1: projections Q = x W_Q + b_Q, K = c W_K + b_K, V = c W_V + b_V, each one product
    // batched over heads that writes head-major [heads, rows, d_h]; per-head norms (where the
    // layer has them), then rotary embedding on Q and K.
    Tensor q = project_heads(backend_, x, w.w_q, w.b_q, d_h);  // [H, T, d_h] = [KV, G*T, d_h]
    Tensor k = project_heads(backend_, c, w.w_k, w.b_k, d_h);  // [KV, S, d_h]
    Tensor v = project_heads(backend_, c, w.w_v, w.b_v, d_h);  // [KV, S, d_h]
    for (auto [heads, norm] : {std::pair{&q, &w.q_norm}, std::pair{&k, &w.k_norm}}) {
        if (norm->empty()) continue;
        *heads = w.qk_norm_across_heads ? rms_normalized_across_heads(*heads, *norm, w.qk_norm_epsilon)
                                        : rms_normalized(*heads, *norm, w.qk_norm_epsilon, w.qk_norm_offset);
    }
    apply_rope(q, w.rope, rope_frequencies_);
    apply_rope(k, w.rope, rope_frequencies_);

    // Steps 2-4 go through the map in steps of about 2 MB, so that a step's scores are still in
    // cache when they are masked, normalised and multiplied by V: the [H, T, S] map is written
    // once and read once here. A step is a run of query rows of one KV group (its G heads' rows
    // are contiguous) or, for short sequences, several whole groups in one batched product.
    // Under a causal mask a run of rows only sees the keys up to its last row: its products
    // stop there, rounded up to a quarter of the keys so that only three more shapes need JIT
    // code (measured: finer steps saved work but cost as much again in code generation).
    r.attention = take_map_buffer({H, T, S});
    r.logit_margin = Tensor({H, T});
    Tensor z = Tensor::uninitialized({H, T, d_h});
    const MapSteps step = map_steps(KV, G * T, S);
    const float scale =
        static_cast<float>(w.score_scale > 0 ? w.score_scale : 1.0 / std::sqrt(static_cast<double>(d_h)));
    const int64_t key_quantum = (S + 3) / 4;
    for (int64_t g0 = 0; g0 < KV; g0 += step.groups)
        for (int64_t first = 0; first < step.group_rows; first += step.rows) {
            const int64_t rows = std::min(step.rows, step.group_rows - first), row0 = g0 * step.group_rows + first;
            const int64_t count = step.groups * rows;
            const int64_t n_keys =
                std::min(S, (keys_seen(r.visibility, row0, count) + key_quantum - 1) / key_quantum * key_quantum);
            // The step's rows hold n_keys keys each (dense) until Step 4 has read them.
            float* map_rows = r.attention.ptr() + row0 * S;
            // Step 2: scaled scores Q[rows] K_g[:n_keys]^T / sqrt(d_h) (or the layer's score scale),
            // K_g^T a transposed view of K; soft-capped where the layer says (Gemma 2); plus the request's
            // score bias (T5).
            MatmulShape scores = batched_matmul(step.groups, rows, d_h, n_keys, step.group_rows);
            scores.w_strides[1] = 1, scores.w_strides[2] = d_h;
            if (step.groups > 1) scores.w_strides[0] = S * d_h;
            scores.scale = scale;
            backend_.matmul(scores, q.ptr() + row0 * d_h, k.ptr() + g0 * S * d_h, nullptr, map_rows);
            if (w.logit_softcap > 0) soft_cap(map_rows, count * n_keys, w.logit_softcap);
            if (request.score_bias) add_score_bias(map_rows, row0, count, n_keys, *request.score_bias);
            // Step 3: masks (causal future, padding), logit margins and the softmax over visible keys.
            masked_softmax(map_rows, row0, count, n_keys, r.visibility, r.logit_margin.ptr() + row0);
            // Step 4: head outputs Z[rows] = P[rows, :n_keys] V_g[:n_keys].
            MatmulShape outputs = batched_matmul(step.groups, rows, n_keys, d_h, step.group_rows);
            if (step.groups > 1) outputs.w_strides[0] = S * d_h;
            backend_.matmul(outputs, map_rows, v.ptr() + g0 * S * d_h, nullptr, z.ptr() + row0 * d_h);
            if (n_keys < S) spread_rows(map_rows, count, n_keys, S);
        }
    r.context = from_head_major(z);  // [T, H*d_h]
    r.values = std::move(v);

    // Step 5: output projection, each head's share of it, and what each key sends through each head.
    r.output = linear(backend_, r.context, w.w_o, w.b_o);
    if ((request.with_contributions || request.with_value_norms) && !output_shares_)
        output_shares_ = std::make_unique<HeadOutputShares>(backend_, w.w_o, H);
    if (request.with_contributions || request.with_value_norms) r.output_gram = output_shares_->output_gram();
    if (request.with_contributions)
        output_shares_->summarise(backend_, z, r.context, r.contribution_norms, r.contribution_gram);
    if (request.with_value_norms) output_shares_->value_norms(r.values, r.value_norms);
    return r;
}

}  // namespace attn_viz
