// QK attribution: the components of the stream entering a block at the query and the key
// position (residual_components.hpp), each through the block's frozen first norm, the head's
// projection and RoPE, and every query-side x key-side dot product; all in double.
#include "qk_attribution.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "error.hpp"
#include "head_names.hpp"
#include "residual_components.hpp"

namespace attn_viz {
namespace {

// One side of the score: the head vectors [n, d_h] (row a: component a through the frozen norm,
// the projection and RoPE) and their names.
struct QkSide {
    std::vector<std::string> names;
    std::vector<double> vectors;  // [n, d_h]
};

// Block l's first norm N1: the model's own, or (a streamed model) read now.
NormWeights qk_attention_norm(const ModelWeights& weights, int64_t l) {
    std::optional<BlockWeights> streamed;
    return weights.block(l, streamed).attention_norm;
}

// Why one block's scores are not bilinear in its input stream, or "".
std::string qk_layer_obstacle(const LayerWeights& a, int64_t l) {
    if (!a.q_norm.empty() || !a.k_norm.empty())
        return fmt::format("block {} normalises {} queries and keys (QK-norm)", l,
                           a.qk_norm_across_heads ? "its (across heads)" : "each head's");
    if (a.logit_softcap > 0)
        return fmt::format("block {}'s attention scores are soft-capped (attn_logit_softcapping)", l);
    return "";
}

// v: [d_h] one head vector -> rotated as apply_rope rotates it at `position` (attention.cpp).
void rotate_head_vector(double* v, RopeStyle style, const std::vector<double>& inverse_frequencies, int64_t position) {
    if (style == RopeStyle::none) return;
    const int64_t half = static_cast<int64_t>(inverse_frequencies.size());
    for (int64_t i = 0; i < half; ++i) {
        const double angle = static_cast<double>(position) * inverse_frequencies[static_cast<size_t>(i)];
        const double c = std::cos(angle), s = std::sin(angle);
        const int64_t a = style == RopeStyle::interleaved ? 2 * i : i;
        const int64_t b = style == RopeStyle::interleaved ? 2 * i + 1 : i + half;
        const double x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
    }
}

// The stream's components at position p entering block l, in double: [C, D] with their names.
// They sum to the stream's row (the feed-forwards are what remains of each block's addition
// after its heads and bias as summed here, so the sum telescopes).
std::vector<double> stream_components(const WholeModel& model, const ModelRun& run, int64_t l, int64_t p,
                                      std::vector<std::string>& names) {
    const ModelWeights& weights = model.weights();
    const int64_t D = weights.config.d_model;
    const std::vector<const LayerWeights*> attention = model.attention_weights();
    std::vector<double> c;
    auto add = [&](std::string name) {
        names.push_back(std::move(name));
        c.resize(c.size() + static_cast<size_t>(D), 0.0);
        return c.data() + c.size() - static_cast<size_t>(D);
    };
    const float* entering = run.residual[0].ptr() + p * D;
    const bool split_positions = !weights.position_embedding.empty() && weights.embedding_norm.weight.empty();
    double* embed = add("embed");
    for (int64_t i = 0; i < D; ++i) embed[i] = entering[i];
    if (split_positions) {
        const float* position = weights.position_embedding.ptr() + p * D;
        for (int64_t i = 0; i < D; ++i) embed[i] -= position[i];
        double* pos = add("pos_embed");
        for (int64_t i = 0; i < D; ++i) pos[i] = position[i];
    }
    const double residual_scale = weights.config.residual_scale;  // on what each block adds (Granite)
    for (int64_t m = 0; m < l; ++m) {
        const LayerWeights& w = *attention[static_cast<size_t>(m)];
        const LayerResult& layer = run.layers[static_cast<size_t>(m)];
        const int64_t width = layer.context.dim(1), d_h = w.d_head;
        std::vector<double> attended(static_cast<size_t>(D), 0.0);
        for (int64_t h = 0; h < w.num_heads; ++h) {
            double* out = add(head_name(m, h));  // r z_h W_O^h, W_O^h rows [h d_h, (h+1) d_h) of [H*d_h, D]
            const float* z = layer.context.ptr() + p * width + h * d_h;
            for (int64_t e = 0; e < d_h; ++e) {
                const float* row = w.w_o.ptr() + (h * d_h + e) * D;
                const double scaled = residual_scale * z[e];
                for (int64_t i = 0; i < D; ++i) out[i] += scaled * row[i];
            }
            for (int64_t i = 0; i < D; ++i) attended[i] += out[i];
        }
        if (!w.b_o.empty()) {
            double* bias = add(fmt::format("L{} attn bias", m));
            for (int64_t i = 0; i < D; ++i) attended[i] += (bias[i] = residual_scale * w.b_o.data[i]);
        }
        feed_forward_row(run, static_cast<size_t>(m), p, attended.data(), add(fmt::format("L{} mlp", m)));
    }
    return c;
}

// One side at position p of block l's head columns [c0, c0 + d_h) of `projection` ([D, width],
// x W) with its bias (`bias_name`): each stream component through the frozen first norm, then the
// norm's bias and the projection's, each rotated at p.
QkSide qk_side(const WholeModel& model, const ModelRun& run, const NormWeights& norm, const LayerWeights& w,
               const Tensor& projection, const Tensor& bias, int64_t c0, int64_t l, int64_t p,
               const std::string& bias_name) {
    const ModelConfig& config = model.weights().config;
    const int64_t D = config.d_model, d_h = w.d_head, width = projection.dim(1);
    QkSide side;
    const std::vector<double> components = stream_components(model, run, l, p, side.names);
    const int64_t C = static_cast<int64_t>(side.names.size());
    const FrozenNorm frozen = frozen_norm(run.residual[static_cast<size_t>(l)].ptr() + p * D, D, norm, config);
    // A = s diag(w) W[:, c0:c0+d_h], its columns centred for LayerNorm: component c gives c A.
    std::vector<double> a(static_cast<size_t>(D * d_h));
    for (int64_t i = 0; i < D; ++i)
        for (int64_t e = 0; e < d_h; ++e)
            a[i * d_h + e] =
                frozen.scale * frozen_norm_weight(norm, config.norm, i) * projection.data[i * width + c0 + e];
    if (frozen.centered)
        for (int64_t e = 0; e < d_h; ++e) {
            double mean = 0;
            for (int64_t i = 0; i < D; ++i) mean += a[i * d_h + e];
            mean /= static_cast<double>(D);
            for (int64_t i = 0; i < D; ++i) a[i * d_h + e] -= mean;
        }
    side.vectors.assign(static_cast<size_t>(C * d_h), 0.0);
#pragma omp parallel for schedule(static) if (C * D * d_h > (int64_t{1} << 20))
    for (int64_t k = 0; k < C; ++k)
        for (int64_t i = 0; i < D; ++i) {
            const double x = components[k * D + i];
            for (int64_t e = 0; e < d_h; ++e) side.vectors[k * d_h + e] += x * a[i * d_h + e];
        }
    if (!norm.bias.empty()) {
        side.names.push_back(fmt::format("L{} norm bias", l));
        for (int64_t e = 0; e < d_h; ++e) {
            double sum = 0;
            for (int64_t i = 0; i < D; ++i) sum += double(norm.bias.data[i]) * projection.data[i * width + c0 + e];
            side.vectors.push_back(sum);
        }
    }
    if (!bias.empty()) {
        side.names.push_back(bias_name);
        for (int64_t e = 0; e < d_h; ++e) side.vectors.push_back(bias.data[c0 + e]);
    }
    const std::vector<double> frequencies = rope_inverse_frequencies(w);
    for (size_t k = 0; k < side.names.size(); ++k)
        rotate_head_vector(side.vectors.data() + k * d_h, w.rope, frequencies, p);
    return side;
}

// The head vector [d_h] at position p from the whole stream row, not decomposed: N1 (frozen as
// the model normalises the row), the projection's head columns and bias, RoPE.
std::vector<double> qk_whole_vector(const ModelConfig& config, const ModelRun& run, const NormWeights& norm,
                                    const LayerWeights& w, const Tensor& projection, const Tensor& bias, int64_t c0,
                                    int64_t l, int64_t p) {
    const int64_t D = config.d_model, d_h = w.d_head, width = projection.dim(1);
    const float* x = run.residual[static_cast<size_t>(l)].ptr() + p * D;
    const FrozenNorm frozen = frozen_norm(x, D, norm, config);
    std::vector<double> v(static_cast<size_t>(d_h), 0.0);
    for (int64_t i = 0; i < D; ++i) {
        const double n = frozen.scale * (x[i] - frozen.mean) * frozen_norm_weight(norm, config.norm, i) +
                         (norm.bias.empty() ? 0.0 : double(norm.bias.data[i]));
        for (int64_t e = 0; e < d_h; ++e) v[e] += n * projection.data[i * width + c0 + e];
    }
    if (!bias.empty())
        for (int64_t e = 0; e < d_h; ++e) v[e] += bias.data[c0 + e];
    rotate_head_vector(v.data(), w.rope, rope_inverse_frequencies(w), p);
    return v;
}

double dot_head(const double* a, const double* b, int64_t n) {
    double sum = 0;
    for (int64_t e = 0; e < n; ++e) sum += a[e] * b[e];
    return sum;
}

}  // namespace

std::vector<double> QkAttribution::query_totals() const {
    std::vector<double> totals(static_cast<size_t>(query_count()), 0.0);
    for (int64_t a = 0; a < query_count(); ++a)
        for (int64_t b = 0; b < key_count(); ++b) totals[a] += term(a, b);
    return totals;
}

std::vector<double> QkAttribution::key_totals() const {
    std::vector<double> totals(static_cast<size_t>(key_count()), 0.0);
    for (int64_t a = 0; a < query_count(); ++a)
        for (int64_t b = 0; b < key_count(); ++b) totals[b] += term(a, b);
    return totals;
}

std::string qk_attribution_obstacle(const ModelWeights& weights) {
    switch (weights.config.residual) {
        case ResidualLayout::post_norm:
            return "its norms come after each block's attention (post-norm): the stream a block reads is not a sum of "
                   "the earlier blocks' outputs";
        case ResidualLayout::sandwich:
            return "a norm rescales each attention output before the residual add (pre- and post-norms)";
        case ResidualLayout::post_sublayer:
            return "a norm rescales each attention output before the residual add (post-sublayer norms)";
        case ResidualLayout::pre_norm:
        case ResidualLayout::parallel:
            break;
    }
    // A streamed model's first block stands for all: reading every block for this would convert the whole model.
    const int64_t checked =
        weights.blocks->streams() ? std::min<int64_t>(1, weights.config.n_layers) : weights.config.n_layers;
    std::optional<BlockWeights> streamed;
    for (int64_t l = 0; l < checked; ++l)
        if (std::string why = qk_layer_obstacle(weights.block(l, streamed).attention, l); !why.empty()) return why;
    return "";
}

int64_t default_key_position(const ModelRun& run, int64_t layer, int64_t head, int64_t query_position) {
    const LayerResult& r = run.layers[static_cast<size_t>(layer)];
    const int64_t T = r.attention.dim(1), S = r.attention.dim(2);
    const float* row = r.attention.ptr() + (head * T + query_position) * S;
    int64_t best = -1;
    for (int64_t j = 0; j < S; ++j)
        if (r.visibility.visible(query_position, j) && (best < 0 || row[j] > row[best])) best = j;
    return best < 0 ? 0 : best;
}

QkPositions qk_positions(const ModelRun& run, int64_t layer, int64_t head, std::optional<int64_t> query,
                         std::optional<int64_t> key) {
    const std::string name = head_name(layer, head);
    const int64_t L = static_cast<int64_t>(run.layers.size());
    if (layer < 0 || layer >= L) throw Error(ErrorKind::usage, fmt::format("{}: the model has {} layers", name, L));
    const LayerResult& r = run.layers[static_cast<size_t>(layer)];
    const int64_t H = r.attention.dim(0), T = r.attention.dim(1);
    if (head < 0 || head >= H)
        throw Error(ErrorKind::usage, fmt::format("{}: the model has {} heads per layer", name, H));
    auto check = [&](int64_t p, const char* what) {
        if (p < 0 || p >= T)
            throw Error(ErrorKind::usage,
                        fmt::format("{} position {} is outside the {} tokens (positions 0..{})", what, p, T, T - 1));
        return p;
    };
    QkPositions positions;
    positions.query = check(query.value_or(T - 1), "query");
    positions.key = check(key ? *key : default_key_position(run, layer, head, positions.query), "key");
    const Visibility& v = r.visibility;
    const int64_t i = positions.query, j = positions.key;
    if (v.causal && j > i)
        throw Error(ErrorKind::usage, fmt::format("key position {} is after query position {}: head {} is causal, its "
                                                  "query sees keys {}..{}",
                                                  j, i, name, v.visible_begin(i), i));
    if (j < v.visible_begin(i))
        throw Error(ErrorKind::usage,
                    fmt::format("key position {} is outside head {}'s sliding window of {} keys: query position {} "
                                "sees keys {}..{}",
                                j, name, v.window, i, v.visible_begin(i), v.visible_end(i) - 1));
    return positions;
}

QkAttribution attribute_qk(const WholeModel& model, const ModelRun& run, int64_t layer, int64_t head,
                           std::optional<int64_t> query, std::optional<int64_t> key) {
    const ModelWeights& weights = model.weights();
    if (const std::string obstacle = qk_attribution_obstacle(weights); !obstacle.empty())
        throw Error(ErrorKind::internal, fmt::format("attribute_qk: a {} model's attention scores do not decompose: {}",
                                                     weights.config.architecture, obstacle));
    const QkPositions positions = qk_positions(run, layer, head, query, key);
    const LayerWeights& w = *model.attention_weights()[static_cast<size_t>(layer)];
    if (const std::string obstacle = qk_layer_obstacle(w, layer); !obstacle.empty())
        throw Error(ErrorKind::internal, fmt::format("attribute_qk: {}", obstacle));
    const NormWeights norm = qk_attention_norm(weights, layer);
    QkAttribution a;
    a.layer = layer, a.head = head, a.kv_head = head / (w.num_heads / w.num_kv_heads);
    a.query_position = positions.query, a.key_position = positions.key;
    a.scale = w.score_scale > 0 ? w.score_scale : 1.0 / std::sqrt(static_cast<double>(w.d_head));
    const int64_t d_h = w.d_head, q0 = head * d_h, k0 = a.kv_head * d_h, i = a.query_position, j = a.key_position;
    // q: [Q, d_h], k: [K, d_h]
    const QkSide q = qk_side(model, run, norm, w, w.w_q, w.b_q, q0, layer, i, "query bias");
    const QkSide k = qk_side(model, run, norm, w, w.w_k, w.b_k, k0, layer, j, "key bias");
    a.query_components = q.names, a.key_components = k.names;
    for (int64_t x = 0; x < a.query_count(); ++x)
        for (int64_t y = 0; y < a.key_count(); ++y) {
            a.terms.push_back(a.scale * dot_head(q.vectors.data() + x * d_h, k.vectors.data() + y * d_h, d_h));
            a.term_sum += a.terms.back();
        }
    const std::vector<double> whole_q = qk_whole_vector(weights.config, run, norm, w, w.w_q, w.b_q, q0, layer, i);
    const std::vector<double> whole_k = qk_whole_vector(weights.config, run, norm, w, w.w_k, w.b_k, k0, layer, j);
    a.score = a.scale * dot_head(whole_q.data(), whole_k.data(), d_h);
    const Tensor& map = run.layers[static_cast<size_t>(layer)].attention;  // [H, T, S]
    a.attention = map.data[static_cast<size_t>((head * map.dim(1) + i) * map.dim(2) + j)];
    for (int64_t l = 0; l < layer && j > 0; ++l) {
        const Tensor& earlier = run.layers[static_cast<size_t>(l)].attention;  // [H, T, S]
        for (int64_t h = 0; h < earlier.dim(0); ++h)
            if (earlier.data[static_cast<size_t>((h * earlier.dim(1) + j) * earlier.dim(2) + j - 1)] >=
                QkAttribution::previous_token_threshold)
                a.previous_token_heads.push_back(head_name(l, h));
    }
    return a;
}

}  // namespace attn_viz
