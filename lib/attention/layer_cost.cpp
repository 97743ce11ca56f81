#include "layer_cost.hpp"

#include <algorithm>
#include <initializer_list>

#include "memory_budget.hpp"

namespace attn_viz {

double attention_flops(int64_t T, int64_t S, int64_t D, int64_t H, int64_t KV, int64_t d_head, bool shares,
                       bool causal) {
    const double projections = 2.0 * T * D * H * d_head + 2.0 * 2.0 * S * D * KV * d_head;
    // Query i sees keys [0, min(i + 1, S)) under a causal mask.
    const double pairs = causal ? static_cast<double>(std::min(T, S)) * (std::min(T, S) + 1) / 2 +
                                      static_cast<double>(std::max<int64_t>(T - S, 0)) * S
                                : static_cast<double>(T) * S;
    const double scores_and_pv = 2.0 * 2.0 * H * pairs * d_head;
    const double output = 2.0 * T * H * d_head * D;
    const double width = static_cast<double>(H) * d_head;
    const double share_products = shares ? 2.0 * T * width * width + 2.0 * T * width * d_head : 0.0;
    return projections + scores_and_pv + output + share_products;
}

double block_flops(const LayerWeights& attention, const ModelConfig& config, int64_t T) {
    const LayerWeights& w = attention;
    const double matrices = config.feed_forward == FeedForwardKind::gated ? 3.0 : 2.0;
    return attention_flops(T, T, w.d_model, w.num_heads, w.num_kv_heads, w.d_head, false, w.causal) +
           matrices * 2.0 * T * config.d_model * config.ffn_dim;
}

namespace {

uint64_t nonnegative(int64_t v) { return static_cast<uint64_t>(std::max<int64_t>(v, 0)); }

uint64_t mul(std::initializer_list<uint64_t> factors) {
    uint64_t p = 1;
    for (uint64_t f : factors) p = saturating_product(p, f);
    return p;
}

uint64_t add(std::initializer_list<uint64_t> terms) {
    uint64_t sum = 0;
    for (uint64_t v : terms) sum = sum > UINT64_MAX - v ? UINT64_MAX : sum + v;
    return sum;
}

}  // namespace

uint64_t estimate_layer_run_bytes(int64_t d_model, int64_t num_heads, int64_t num_kv_heads, int64_t d_head, int64_t T,
                                  int64_t S) {
    const auto u = nonnegative;
    const uint64_t D = u(d_model), H = u(num_heads), KV = u(num_kv_heads), dh = u(d_head), t = u(T), s = u(S);
    // Floats: the weights twice (loaded, and the layer's copy), inputs, Q (twice: projected and
    // head-major), K, V, the attention map, margins, head outputs twice, output, and what the
    // per-head output shares need (head_output_shares.hpp: two [H d_h, H d_h] Grams, z G_hh).
    const uint64_t weights = add({mul({2, D, H, dh}), mul({2, D, KV, dh}), mul({2, H}), mul({2, KV, dh}), D});
    const uint64_t floats =
        add({mul({2, weights}), mul({t, D}), mul({s, D}), mul({2, t, H, dh}), mul({2, s, KV, dh}), mul({H, t, s}),
             mul({2, H, t}), mul({2, t, H, dh}), mul({t, D}), mul({2, H, dh, H, dh}), mul({t, H, dh}), mul({H, H})});
    return saturating_product(floats, 4);
}

uint64_t estimate_layer_result_bytes(int64_t d_model, int64_t num_heads, int64_t num_kv_heads, int64_t d_head,
                                     int64_t T, int64_t S) {
    const auto u = nonnegative;
    const uint64_t D = u(d_model), H = u(num_heads), KV = u(num_kv_heads), dh = u(d_head), t = u(T), s = u(S);
    const uint64_t floats =
        add({mul({H, t, s}), mul({2, H, t}), mul({t, H, dh}), mul({KV, s, dh}), mul({t, D}), mul({H, H}), mul({H, s})});
    return saturating_product(floats, 4);
}

}  // namespace attn_viz
