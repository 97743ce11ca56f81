// True head ablation (zero and mean) on small random Llama models against the double-precision
// reference forward with the head's output replaced, a planted head that cannot matter, and the
// --ablate head list.
#include <algorithm>
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "block_sources.hpp"
#include "error.hpp"
#include "expect_error.hpp"
#include "head_ablation.hpp"
#include "random_llama.hpp"
#include "reference_llama.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// mean_t sum_v p log(p / q) with p, q the softmaxes of the rows.
double reference_kl(const std::vector<double>& clean, const std::vector<double>& ablated, int64_t T, int64_t vocab) {
    double total = 0;
    for (int64_t t = 0; t < T; ++t) {
        double zp = 0, zq = 0;
        for (int64_t v = 0; v < vocab; ++v)
            zp += std::exp(clean[t * vocab + v]), zq += std::exp(ablated[t * vocab + v]);
        for (int64_t v = 0; v < vocab; ++v) {
            const double p = std::exp(clean[t * vocab + v]) / zp, q = std::exp(ablated[t * vocab + v]) / zq;
            total += p * std::log(p / q);
        }
    }
    return total / static_cast<double>(T);
}

// Head h's output in layer l averaged over the tokens: [hs].
std::vector<double> mean_head_output(const ReferenceRun& run, int64_t l, int64_t h, int64_t hs, int64_t D, int64_t T) {
    const std::vector<double> rows = reference_head_rows(run, l, h, hs, D, T);
    std::vector<double> mean(static_cast<size_t>(hs), 0.0);
    for (size_t k = 0; k < rows.size(); ++k) mean[k % mean.size()] += rows[k] / static_cast<double>(T);
    return mean;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("zero and mean ablation match the double reference with the head's output replaced") {
    for_each_test_model([&](const ModelShape& s, WholeModel& model, OnednnBackend& backend) {
        const std::vector<AblatedHead> heads = parse_ablated_heads("all", s.layers, s.heads);
        for (int T : {1, 2, 7}) {
            const std::vector<int> tokens = random_ids(T, s.vocab);
            const ModelRun clean = model.run(tokens);
            const ReferenceRun reference = reference_forward(model.weights(), tokens);
            for (AblationMode mode : {AblationMode::zero, AblationMode::mean}) {
                INFO("dim " << s.dim << " heads " << s.heads << " T " << T << " mode "
                            << std::string(ablation_mode_name(mode)));
                const AblationReport report = ablate_heads(model, backend, clean, heads, mode);
                REQUIRE(report.heads.size() == heads.size());
                const double clean_loss = reference_next_token_loss(reference.logits, tokens, s.vocab);
                CHECK(std::isnan(report.clean_loss) == (T == 1));
                if (T > 1) CHECK(report.clean_loss == doctest::Approx(clean_loss).epsilon(1e-5));
                double largest_kl = 0;
                for (const HeadAblationEffect& e : report.heads) {
                    const int64_t hs = s.dim / s.heads;
                    ReferenceAblation ablation{e.id.layer, e.id.head, {}};
                    if (mode == AblationMode::mean)
                        ablation.replacement = mean_head_output(reference, e.id.layer, e.id.head, hs, s.dim, T);
                    const ReferenceRun ablated = reference_forward(model.weights(), tokens, ablation);
                    const double kl = reference_kl(reference.logits, ablated.logits, T, s.vocab);
                    largest_kl = std::max(largest_kl, kl);
                    CHECK(e.kl == doctest::Approx(kl).epsilon(1e-3).scale(1e-3));
                    if (T > 1) {
                        const double loss = reference_next_token_loss(ablated.logits, tokens, s.vocab);
                        CHECK(e.loss == doctest::Approx(loss).epsilon(1e-5));
                        CHECK(e.delta_loss == doctest::Approx(loss - clean_loss).epsilon(1e-3).scale(1e-3));
                    } else {
                        CHECK((std::isnan(e.loss) && std::isnan(e.delta_loss)));
                    }
                }
                // Mean ablation changes nothing when every position's head output is the same (one
                // token, or one id repeated: the mean is the output itself).
                const bool one_id = std::count(tokens.begin(), tokens.end(), tokens.front()) == T;
                if (mode == AblationMode::zero || !one_id)
                    CHECK(largest_kl > 1e-5);
                else
                    CHECK(largest_kl < 1e-9);
            }
        }
    });
}

TEST_CASE("ablating a head whose output projection is zero changes nothing") {
    OnednnBackend backend;
    ModelWeights weights = random_model(16, 24, 3, 4, 2, 30, 16);
    const int64_t d_head = 4, D = 16;
    Tensor& w_o = edited_blocks(weights)[1].attention.w_o;  // [H*d_h, D]: head 2's rows are zeroed
    std::fill(w_o.data.begin() + 2 * d_head * D, w_o.data.begin() + 3 * d_head * D, 0.0f);
    WholeModel model(backend, std::move(weights));
    std::vector<int> tokens(9);
    std::uniform_int_distribution<int> token(0, 29);
    for (int& id : tokens) id = token(rng());
    const ModelRun clean = model.run(tokens);
    for (AblationMode mode : {AblationMode::zero, AblationMode::mean}) {
        const AblationReport report = ablate_heads(model, backend, clean, {{1, 2}, {1, 1}}, mode);
        CHECK(report.heads[0].delta_loss == 0.0);
        CHECK(report.heads[0].kl == 0.0);
        CHECK(report.heads[1].kl > 1e-4);  // a live head of the same layer does change the prediction
    }
}

TEST_CASE("ablated head lists: all, L1H3 and L:H heads with ranges, and one-line usage errors") {
    CHECK(parse_ablated_heads("all", 2, 3).size() == 6);
    CHECK(parse_ablated_heads("all", 2, 3)[4] == AblatedHead{1, 1});
    CHECK(parse_ablated_heads("1:2,0:0", 2, 3) == std::vector<AblatedHead>{{1, 2}, {0, 0}});
    // The one head notation, any case, with ranges of one layer's heads.
    CHECK(parse_ablated_heads("L1H2,l0h0,1:0-1", 2, 3) == std::vector<AblatedHead>{{1, 2}, {0, 0}, {1, 0}, {1, 1}});
    for (const char* bad : {"", "1", "1:", ":1", "2:0", "0:3", "0:1,0:1", "0:1,", "a:b", "-1:0", "0:1;1:1", "L2H0",
                            "L0H1,0:1", "L0H1-3", "L0H2-1", "H1"}) {
        INFO(bad);
        CHECK(expect_error(ErrorKind::usage, [&] { parse_ablated_heads(bad, 2, 3); }, {}).rfind("heads '", 0) == 0);
    }
    CHECK(parse_ablation_mode("mean") == AblationMode::mean);
    CHECK_THROWS_AS(parse_ablation_mode("resample"), Error);
}

}  // TEST_SUITE("model")
