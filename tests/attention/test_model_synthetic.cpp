// The whole-model forward and greedy decoding on small random Llama models (no files needed):
// oneDNN against the double-precision llama2.c-style reference, several shapes including one
// head, T = 1 and grouped-query attention.
#include <algorithm>
#include <cmath>

#include <doctest/doctest.h>

#include "error.hpp"
#include "onednn_backend.hpp"
#include "random_llama.hpp"
#include "reference_llama.hpp"
#include "support.hpp"
#include "whole_model.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

double max_difference(const std::vector<double>& reference, const Tensor& actual) {
    double m = 0;
    for (size_t i = 0; i < reference.size(); ++i) m = std::max(m, std::fabs(reference[i] - actual.data[i]));
    return m;
}

}  // namespace

TEST_SUITE("model") {

TEST_CASE("whole-model forward matches the double reference on random models") {
    for_each_test_model([&](const ModelShape& s, WholeModel& model, OnednnBackend&) {
        for (int T : {1, 5, 16}) {
            const std::vector<int> tokens = random_ids(T, s.vocab);
            const ModelRun run = model.run(tokens);
            const ReferenceRun reference = reference_forward(model.weights(), tokens);
            REQUIRE(run.layers.size() == static_cast<size_t>(s.layers));
            CHECK(run.tokens == tokens);
            CHECK(max_difference(reference.logits, run.logits) < 1e-4);
            for (size_t l = 0; l < run.layers.size(); ++l) {
                CHECK(run.layers[l].attention.shape == std::vector<int64_t>{s.heads, T, T});
                CHECK(max_difference(reference.attention[l], run.layers[l].attention) < 1e-5);
                CHECK(run.layers[l].contribution_norms.shape == std::vector<int64_t>{s.heads, T});
            }
        }
        CHECK_THROWS_AS(model.run(std::vector<int>(17, 0)), Error);
        CHECK_THROWS_AS(model.run({0, static_cast<int>(s.vocab)}), Error);
        CHECK_THROWS_AS(model.run({-1}), Error);
    });
}

TEST_CASE("greedy decoding picks each argmax of the unpadded forward and stops at seq_len") {
    OnednnBackend backend;
    WholeModel model(backend, random_model(16, 24, 2, 4, 2, 30, 10));
    for (std::vector<int> prompt : {std::vector<int>{3}, std::vector<int>{5, 7, 9}}) {
        const std::vector<int> sequence = greedy_generate(model, prompt, 5);
        REQUIRE(sequence.size() >= prompt.size());
        CHECK(std::equal(prompt.begin(), prompt.end(), sequence.begin()));
        CHECK(sequence.size() <= prompt.size() + 5);
        // Each generated token is (up to float ties) the best next token of the reference on its prefix.
        for (size_t t = prompt.size(); t <= sequence.size() && t < prompt.size() + 5; ++t) {
            const std::vector<int> prefix(sequence.begin(), sequence.begin() + static_cast<std::ptrdiff_t>(t));
            const ReferenceRun reference = reference_forward(model.weights(), prefix);
            const auto row = reference.logits.begin() + static_cast<std::ptrdiff_t>((t - 1) * 30);
            const double best = *std::max_element(row, row + 30);
            const int chosen = t < sequence.size() ? sequence[t] : 1;  // a shorter sequence stopped at BOS
            CHECK(row[chosen] >= best - 1e-4);
        }
    }
    CHECK(greedy_generate(model, {2, 2, 2, 2, 2, 2, 2, 2}, 50).size() <= 10);
    CHECK(greedy_generate(model, {4}, 0) == std::vector<int>{4});
    CHECK_THROWS_AS(greedy_generate(model, {}, 3), Error);
    CHECK_THROWS_AS(greedy_generate(model, std::vector<int>(11, 0), 3), Error);
}

TEST_CASE(
    "greedy decoding with choices picks each argmax among the ids below it (a tokenizer smaller than the vocabulary)") {
    OnednnBackend backend;
    WholeModel model(backend, random_model(16, 24, 2, 4, 2, 30, 12));
    const int64_t choices = 7;
    const std::vector<int> sequence = greedy_generate(model, {20, 25}, 8, {}, {}, choices);
    REQUIRE(sequence.size() == 10);  // no end ids: it runs to its length
    for (size_t t = 2; t < sequence.size(); ++t) {
        CHECK(sequence[t] < choices);
        const ReferenceRun reference = reference_forward(
            model.weights(), std::vector<int>(sequence.begin(), sequence.begin() + static_cast<std::ptrdiff_t>(t)));
        const auto row = reference.logits.begin() + static_cast<std::ptrdiff_t>((t - 1) * 30);
        CHECK(row[sequence[t]] >= *std::max_element(row, row + choices) - 1e-4);
    }
}

}  // TEST_SUITE("model")
