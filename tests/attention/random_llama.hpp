// A small random Llama model (no files needed) for the whole-model tests: llama2.c's layout,
// causal, interleaved RoPE, projections scaled by 1/sqrt(fan-in).
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "model_weights.hpp"
#include "onednn_backend.hpp"
#include "support.hpp"
#include "whole_model.hpp"

namespace test_support {

inline attn_viz::ModelWeights random_model(int64_t dim, int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads,
                                           int64_t vocab, int64_t seq_len) {
    using namespace attn_viz;
    ModelWeights w;
    w.config.architecture = "llama";  // RMSNorm, gated SiLU, pre-norm: ModelConfig's defaults
    w.config.d_model = dim, w.config.ffn_dim = hidden, w.config.n_layers = layers, w.config.n_heads = heads;
    w.config.n_kv_heads = kv_heads, w.config.head_dim = dim / heads, w.config.vocab_size = vocab,
    w.config.max_tokens = seq_len;
    const int64_t head = dim / heads, kv = kv_heads * head;
    const float projection_scale = 1.0f / std::sqrt(static_cast<float>(dim));
    w.token_embedding = random_tensor({vocab, dim});
    w.final_norm.weight = random_tensor({dim});
    w.classifier = random_tensor({vocab, dim});
    std::vector<BlockWeights> blocks;
    for (int64_t l = 0; l < layers; ++l) {
        BlockWeights b;
        LayerWeights& a = b.attention;
        a.d_model = dim, a.num_heads = heads, a.num_kv_heads = kv_heads, a.d_head = head;
        a.causal = true, a.rope = RopeStyle::interleaved, a.rope_base = 10000.0;
        a.w_q = random_tensor({dim, dim}, projection_scale), a.w_k = random_tensor({dim, kv}, projection_scale);
        a.w_v = random_tensor({dim, kv}, projection_scale), a.w_o = random_tensor({dim, dim}, projection_scale);
        b.attention_norm.weight = random_tensor({dim}), b.feed_forward_norm.weight = random_tensor({dim});
        b.w_in = random_tensor({hidden, dim}, projection_scale),
        b.w_up = random_tensor({hidden, dim}, projection_scale);
        b.w_out = random_tensor({dim, hidden}, 1.0f / std::sqrt(static_cast<float>(hidden)));
        blocks.push_back(std::move(b));
    }
    w.blocks = std::make_shared<HeldBlocks>(std::move(blocks));
    return w;
}

// The shapes the whole-model tests run on: two layers with grouped-query heads, one layer of one
// head with odd sizes, three layers of multi-query heads.
struct ModelShape {
    int64_t dim, hidden, layers, heads, kv_heads, vocab;
};
inline constexpr ModelShape test_model_shapes[] = {{16, 24, 2, 4, 2, 30}, {8, 5, 1, 1, 1, 7}, {12, 20, 3, 6, 1, 11}};

inline attn_viz::ModelWeights random_model(const ModelShape& s, int64_t seq_len) {
    return random_model(s.dim, s.hidden, s.layers, s.heads, s.kv_heads, s.vocab, seq_len);
}

// Calls check(shape, model, backend) on a random model (16 positions) of each test shape, with
// the shape in the context of every failure: the whole-model tests' common loop.
template <typename Check>
void for_each_test_model(Check check) {
    attn_viz::OnednnBackend backend;
    for (const ModelShape& s : test_model_shapes) {
        INFO("dim " << s.dim << " heads " << s.heads << " kv " << s.kv_heads << " layers " << s.layers);
        attn_viz::WholeModel model(backend, random_model(s, 16));
        check(s, model, backend);
    }
}

// T random ids below `vocab`.
inline std::vector<int> random_ids(int T, int64_t vocab) {
    std::uniform_int_distribution<int> token(0, static_cast<int>(vocab) - 1);
    std::vector<int> tokens(static_cast<size_t>(T));
    for (int& id : tokens) id = token(rng());
    return tokens;
}

}  // namespace test_support
