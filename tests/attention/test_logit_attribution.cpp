// Direct logit attribution on small random models: each head's contribution against a double
// reference from the reference forward's head outputs and final residual, and every component
// summing to the model's logit (RMSNorm pre-norm, and LayerNorm with biases in a parallel block).
#include <cmath>

#include <doctest/doctest.h>

#include "block_sources.hpp"
#include "error.hpp"
#include "logit_attribution.hpp"
#include "random_llama.hpp"
#include "reference_llama.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// The double reference of head h of layer l at position t: r (z_lh,t W_O^h) . s_t (w * U[v]) / c, U[v]
// the classifier's row of the target v, r the residual scale and c the logits' divisor.
double reference_head_attribution(const ModelWeights& w, const ReferenceRun& run, int64_t l, int64_t h, int64_t t,
                                  int target) {
    const int64_t D = w.config.d_model, hs = D / w.config.n_heads;
    double square = 0;
    for (int64_t i = 0; i < D; ++i) square += run.final_residual[t * D + i] * run.final_residual[t * D + i];
    const double scale = 1.0 / std::sqrt(square / static_cast<double>(D) + w.config.norm_epsilon);
    const Tensor& w_o = w.blocks->held(l)->attention.w_o;
    double sum = 0;
    for (int64_t i = 0; i < D; ++i) {
        double written = 0;  // (z_h W_O^h)_i
        for (int64_t j = 0; j < hs; ++j)
            written += run.head_outputs[l][t * D + h * hs + j] * w_o.data[(h * hs + j) * D + i];
        sum += written * scale * w.final_norm.weight.data[i] * w.classifier_matrix().data[target * D + i];
    }
    return sum * w.config.residual_scale / w.config.logits_scaling;
}

// The random Llama made a LayerNorm model with parallel blocks and biases (GPT-NeoX's layout).
ModelWeights layer_norm_parallel_model() {
    ModelWeights w = random_model(16, 24, 2, 4, 4, 30, 16);
    w.config.norm = NormKind::layer_norm, w.config.residual = ResidualLayout::parallel;
    w.final_norm.bias = random_tensor({16});
    for (BlockWeights& b : edited_blocks(w)) {
        b.attention.b_o = random_tensor({16}), b.b_out = random_tensor({16});
        b.attention_norm.bias = random_tensor({16}), b.feed_forward_norm.bias = random_tensor({16});
    }
    return w;
}

}  // namespace

TEST_SUITE("model") {
TEST_CASE("direct logit attribution of each head matches the double reference, and the components sum to the logit") {
    for_each_test_model([&](const ModelShape& s, WholeModel& model, OnednnBackend& backend) {
        for (int T : {1, 2, 7}) {
            INFO("dim " << s.dim << " heads " << s.heads << " T " << T);
            const std::vector<int> tokens = random_ids(T, s.vocab);
            const ModelRun run = model.run(tokens);
            const ReferenceRun reference = reference_forward(model.weights(), tokens);
            const std::vector<int> targets = next_token_targets(run);
            REQUIRE(targets.size() == tokens.size());
            for (int t = 0; t + 1 < T; ++t) CHECK(targets[t] == tokens[t + 1]);
            const LogitAttribution a = attribute_logits(model, backend, run, targets);
            for (int64_t l = 0; l < s.layers; ++l)
                for (int64_t h = 0; h < s.heads; ++h)
                    for (int t = 0; t < T; ++t)
                        CHECK(
                            a.head_at(l, h, t) ==
                            doctest::Approx(reference_head_attribution(model.weights(), reference, l, h, t, targets[t]))
                                .epsilon(1e-3)
                                .scale(1e-3));
            for (int t = 0; t < T; ++t) {
                CHECK(a.logits[t] == doctest::Approx(reference.logits[t * s.vocab + targets[t]]).epsilon(1e-4));
                CHECK(a.component_sum(t) == doctest::Approx(a.logits[t]).epsilon(1e-4).scale(1e-3));
                CHECK(a.norm_bias[t] == 0.0);
            }
        }
    });
}

TEST_CASE("direct logit attribution with Granite's multipliers: scaled embeddings, residual adds and logits") {
    OnednnBackend backend;
    ModelWeights weights = random_model(16, 24, 3, 4, 2, 30, 16);
    weights.config.embedding_scale = 3.5f, weights.config.residual_scale = 0.3, weights.config.logits_scaling = 2.5;
    for (BlockWeights& b : edited_blocks(weights)) b.attention.score_scale = 0.6;
    WholeModel model(backend, weights);
    for (int T : {1, 6}) {
        CAPTURE(T);
        const std::vector<int> tokens = random_ids(T, 30);
        const ModelRun run = model.run(tokens);
        const ReferenceRun reference = reference_forward(model.weights(), tokens);
        for (int64_t i = 0; i < T * 30; ++i)
            CHECK(run.logits.data[i] == doctest::Approx(reference.logits[i]).epsilon(1e-4).scale(1e-3));
        const std::vector<int> targets = next_token_targets(run);
        const LogitAttribution a = attribute_logits(model, backend, run, targets);
        for (int t = 0; t < T; ++t) {
            CHECK(a.component_sum(t) == doctest::Approx(a.logits[t]).epsilon(1e-4).scale(1e-3));
            for (int64_t l = 0; l < 3; ++l)
                for (int64_t h = 0; h < 4; ++h)
                    CHECK(a.head_at(l, h, t) ==
                          doctest::Approx(reference_head_attribution(model.weights(), reference, l, h, t, targets[t]))
                              .epsilon(1e-3)
                              .scale(1e-3));
        }
    }
}

TEST_CASE("direct logit attribution sums to the logit through a final LayerNorm with biases, and for a chosen target") {
    OnednnBackend backend;
    WholeModel model(backend, layer_norm_parallel_model());
    const std::vector<int> tokens = random_ids(9, 30);
    const ModelRun run = model.run(tokens);
    const LogitAttribution a = attribute_logits(model, backend, run, std::vector<int>(9, 4));
    for (int t = 0; t < 9; ++t) {
        CHECK(a.logits[t] == doctest::Approx(run.logits.data[t * 30 + 4]));
        CHECK(a.component_sum(t) == doctest::Approx(a.logits[t]).epsilon(1e-4).scale(1e-3));
        CHECK(a.norm_bias[t] != 0.0);
        CHECK(a.attention_bias[t] != 0.0);
    }
}

TEST_CASE("a head whose output projection is zero attributes nothing") {
    OnednnBackend backend;
    ModelWeights weights = random_model(16, 24, 2, 4, 2, 30, 16);
    Tensor& w_o = edited_blocks(weights)[1].attention.w_o;  // [H*d_h, D]: head 3's rows are zeroed
    std::fill(w_o.data.begin() + 3 * 4 * 16, w_o.data.end(), 0.0f);
    WholeModel model(backend, std::move(weights));
    const ModelRun run = model.run(random_ids(6, 30));
    const LogitAttribution a = attribute_logits(model, backend, run, next_token_targets(run));
    for (int t = 0; t < 6; ++t) {
        CHECK(a.head_at(1, 3, t) == 0.0);
        CHECK(a.head_at(1, 2, t) != 0.0);
    }
}

}  // TEST_SUITE("model")
