// Ground truth: the planted layer run through the real AttentionLayer must be analysed into the
// labels, redundancy and statistics it was built to have.
#include <cmath>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "attention.hpp"
#include "error.hpp"
#include "head_analysis.hpp"
#include "onednn_backend.hpp"
#include "stats_report.hpp"
#include "support.hpp"
#include "synth_layer.hpp"
#include "token_ids.hpp"
#include "weights_file.hpp"

using namespace attn_viz;

namespace {

OnednnBackend& analysis_backend() {
    static OnednnBackend backend;
    return backend;
}

LayerResult run_planted(const PlantedLayer& p) {
    AttentionLayer layer(analysis_backend(), p.weights);
    AttentionRequest request;
    request.input = &p.embeddings;
    return layer.run(request);
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("planted heads get their labels, and the identical pair correlates 1 and groups together") {
    std::vector<std::vector<std::string>> sentences = {
        planted_demo_tokens(), {"a", "b"}, {"x", "y", "x", "z", "y", "x", "w"}};
    for (const auto& tokens : sentences) {
        const PlantedLayer p = make_planted_layer(tokens, test_support::rng()());
        const LayerResult r = run_planted(p);
        AnalysisOptions options = analysis_fixtures::default_options();
        options.sparse_error = true;
        const ModelAnalysis a = analyze_layer(r, &p.weights, token_ids_from_labels(tokens), options);
        INFO("T=" << tokens.size());
        REQUIRE(a.labels.size() == 6);
        if (tokens.size() > 2) {
            CHECK(a.labels == p.planted);
        } else {  // T=2: previous and next token coincide with first/self keys; check the masses only
            CHECK(a.heads[0].previous_token_mass > 0.99);
            CHECK(a.heads[4].next_token_mass > 0.99);
        }
        CHECK(a.matrix(PairMetric::correlation).at(4, 5) == doctest::Approx(1.0).epsilon(1e-6));
        CHECK(a.matrix(PairMetric::js_distance).at(4, 5) < 1e-3);
        CHECK(a.matrix(PairMetric::output_cosine).at(4, 5) == doctest::Approx(1.0).epsilon(1e-5));
        CHECK(a.matrix(PairMetric::weight_qk_cosine).at(4, 5) == doctest::Approx(1.0).epsilon(1e-9));
        CHECK(a.matrix(PairMetric::weight_ov_cosine).at(4, 5) == doctest::Approx(1.0).epsilon(1e-9));
        // Identical heads: CKA 1, each mutual information equal to the head's own (the largest).
        CHECK(a.matrix(PairMetric::output_cka).at(4, 5) == doctest::Approx(1.0).epsilon(1e-5));
        CHECK(a.matrix(PairMetric::output_mi).at(4, 5) ==
              doctest::Approx(a.matrix(PairMetric::output_mi).at(4, 4)).epsilon(1e-3));
        CHECK(a.matrix(PairMetric::choice_mi).at(4, 5) == a.matrix(PairMetric::choice_mi).at(4, 4));
        for (const HeadStats& s : a.heads) CHECK(s.top1_bound_holds == 1.0);
        bool grouped = false;
        for (const auto& group : a.redundant_groups) grouped |= group == std::vector<int64_t>{4, 5};
        CHECK(grouped);
        REQUIRE(!a.redundant_pairs.empty());
        CHECK(a.redundant_pairs[0] == std::pair<int64_t, int64_t>{4, 5});
        // The closest pairs are listed whether or not they are redundant; the flags tell them apart.
        // The twins attend alike and write alike (output cosine 1) in one layer: redundant.
        const nlohmann::json pairs = stats_json(a)["redundant_pairs"];
        CHECK(pairs.front()["attend_alike"] == true);
        CHECK(pairs.front()["same_layer"] == true);
        CHECK(pairs.front()["both_sinks"] == false);
        CHECK(pairs.front()["redundant"] == true);
        CHECK(pairs.back()["attend_alike"] == false);
        CHECK(pairs.back()["redundant"] == false);
    }
}

TEST_CASE("planted heads' statistics equal values computed by hand") {
    const std::vector<std::string> tokens = planted_demo_tokens();
    const PlantedLayer p = make_planted_layer(tokens, test_support::rng()());
    const ModelAnalysis a =
        analyze_layer(run_planted(p), &p.weights, token_ids_from_labels(tokens), analysis_fixtures::default_options());
    const double T = 12;
    // Uniform head: entropy ln T, normalized 1, confidence 1/T, 11 keys for 90% (11/12 >= 0.9 > 10/12),
    // mean distance (1/T^2) sum_i sum_j |i - j| = (T^2 - 1) / (3T), every positional mass 1/T.
    const HeadStats& uniform = a.heads[2];
    CHECK(uniform.entropy == doctest::Approx(std::log(T)).epsilon(1e-6));
    CHECK(uniform.normalized_entropy == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(uniform.confidence == doctest::Approx(1 / T).epsilon(1e-6));
    CHECK(uniform.keys_for_90 == 11);
    CHECK(uniform.mean_distance == doctest::Approx((T * T - 1) / (3 * T)).epsilon(1e-6));
    CHECK(uniform.previous_token_mass == doctest::Approx(1 / T).epsilon(1e-6));
    CHECK(uniform.logit_margin == doctest::Approx(0.0));
    // "the" at 4 and 7 and "cat" at 8 have earlier copies: duplicate targets (none, key 0 is never
    // one; 4; 1), so row 4 is left out and the score is 1/T; induction targets (1; 1,5; 2): 1/T,
    // 2/T, 1/T averaged = 4/(3T).
    CHECK(uniform.duplicate_token == doctest::Approx(1 / T).epsilon(1e-6));
    CHECK(uniform.induction == doctest::Approx(4 / (3 * T)).epsilon(1e-6));
    // The planted sink (head 1) puts everything on key 0, a copy of "the": not a duplicate-token head.
    CHECK(a.heads[1].duplicate_token < 0.01);
    // Planted one-key heads: one key holds nearly all the mass; the margin is the planted gap of 20
    // on rows that have their planted key (the edge row of the shifted heads has a smaller one).
    for (int64_t h : {0, 1, 3, 4}) {
        INFO("head " << h);
        CHECK(a.heads[h].confidence > 0.999);
        CHECK(a.heads[h].keys_for_90 == 1);
        CHECK(a.heads[h].logit_margin > (h == 0 || h == 4 ? 19.0 : 19.9));
    }
    CHECK(a.heads[0].previous_token_mass > 0.999);
    CHECK(a.heads[0].mean_distance == doctest::Approx(11.0 / T).epsilon(1e-3));  // row 0 looks at key 0 (nearest to -1)
    CHECK(a.heads[1].first_token_mass > 0.999);
    CHECK(a.heads[3].self_mass > 0.999);
    CHECK(a.heads[3].mean_distance < 1e-3);
    // The identical heads split the same share of the output.
    CHECK(a.heads[4].ablation_importance == doctest::Approx(a.heads[5].ablation_importance).epsilon(1e-5));
}

TEST_CASE("planted weights and input are written in the loaders' formats") {
    test_support::ScratchDir dir;
    const PlantedLayer p = make_planted_layer(planted_demo_tokens(), 7);
    write_planted_layer(dir / "weights.json", dir / "input.json", p);
    const LayerWeights back = read_weights_file(dir / "weights.json");
    CHECK(back.w_q.data == p.weights.w_q.data);
    CHECK(back.w_o.data == p.weights.w_o.data);
    const auto input = nlohmann::json::parse(test_support::read_text(dir / "input.json"));
    CHECK(input["tokens"] == nlohmann::json(planted_demo_tokens()));
    CHECK(input["embeddings"].size() == 12);
    CHECK(input["embeddings"][3].size() == 48);
    CHECK_THROWS_AS(make_planted_layer({"one"}, 1), Error);
    CHECK(token_ids_from_labels({"a", "b", "a", "c"}) == std::vector<int64_t>{0, 1, 0, 2});
}

TEST_CASE("the induction input repeats a seeded uniform draw") {
    const std::vector<int64_t> t = repeated_random_tokens(50, 100, 200, 42);
    REQUIRE(t.size() == 100);
    for (int i = 0; i < 50; ++i) {
        CHECK(t[i] == t[i + 50]);
        CHECK(t[i] >= 100);
        CHECK(t[i] < 200);
    }
    CHECK(repeated_random_tokens(50, 100, 200, 42) == t);
    CHECK(repeated_random_tokens(50, 100, 200, 43) != t);
    CHECK_THROWS_AS(repeated_random_tokens(0, 0, 10, 1), Error);
    CHECK_THROWS_AS(repeated_random_tokens(5, 10, 10, 1), Error);
}

}  // TEST_SUITE("analysis")
