// compare's output level (next-token KL per position, losses, top-1 agreement, greedy
// continuations) against a float64 computation from the logits, and its summary (ranking, label
// changes, lowest top-1, heads over --fail-above) on hand-made comparisons.
#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "compare_summary.hpp"
#include "output_comparison.hpp"
#include "support.hpp"

using namespace attn_viz;

namespace {

Tensor random_logits(int64_t T, int64_t V, double spread) {
    Tensor logits({T, V});
    std::normal_distribution<float> normal(0.0f, static_cast<float>(spread));
    for (float& x : logits.data) x = normal(test_support::rng());
    return logits;
}

// log softmax of row t in double.
std::vector<double> log_probabilities(const Tensor& logits, int64_t t) {
    const int64_t V = logits.dim(1);
    double largest = -INFINITY, total = 0;
    for (int64_t v = 0; v < V; ++v) largest = std::max(largest, static_cast<double>(logits.data[t * V + v]));
    for (int64_t v = 0; v < V; ++v) total += std::exp(logits.data[t * V + v] - largest);
    std::vector<double> out(static_cast<size_t>(V));
    for (int64_t v = 0; v < V; ++v) out[static_cast<size_t>(v)] = logits.data[t * V + v] - largest - std::log(total);
    return out;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("compare_outputs: KL per position, both losses and top-1 agreement equal a float64 computation") {
    for (const auto& [T, V] : {std::pair<int64_t, int64_t>{1, 5}, {7, 33}, {13, 2}}) {
        CAPTURE(T);
        CAPTURE(V);
        const Tensor a = random_logits(T, V, 3.0);
        Tensor b = a;  // b: a with noise, so some rows keep their argmax and some do not
        std::normal_distribution<float> noise(0.0f, 1.5f);
        for (float& x : b.data) x += noise(test_support::rng());
        std::vector<int> tokens(static_cast<size_t>(T));
        std::uniform_int_distribution<int> id(0, static_cast<int>(V) - 1);
        for (int& t : tokens) t = id(test_support::rng());
        const int64_t choices = V > 2 ? V - 1 : 0;  // the last id is padding past the tokenizer's tokens
        const OutputComparison c = compare_outputs(a, b, tokens, choices);
        REQUIRE(c.kl.size() == static_cast<size_t>(T));
        double mean = 0, loss_a = 0, loss_b = 0;
        int64_t agree = 0;
        for (int64_t t = 0; t < T; ++t) {
            const std::vector<double> p = log_probabilities(a, t), q = log_probabilities(b, t);
            double kl = 0;
            for (int64_t v = 0; v < V; ++v)
                kl += std::exp(p[static_cast<size_t>(v)]) * (p[static_cast<size_t>(v)] - q[static_cast<size_t>(v)]);
            CHECK(c.kl[static_cast<size_t>(t)] == doctest::Approx(kl).epsilon(1e-6));
            mean += kl / static_cast<double>(T);
            if (t + 1 < T) {
                loss_a -= p[static_cast<size_t>(tokens[static_cast<size_t>(t + 1)])] / static_cast<double>(T - 1);
                loss_b -= q[static_cast<size_t>(tokens[static_cast<size_t>(t + 1)])] / static_cast<double>(T - 1);
            }
            const int64_t end = choices > 0 ? choices : V;
            const int top_a = static_cast<int>(std::max_element(p.begin(), p.begin() + end) - p.begin());
            const int top_b = static_cast<int>(std::max_element(q.begin(), q.begin() + end) - q.begin());
            CHECK(c.top1_a[static_cast<size_t>(t)] == top_a);
            CHECK(c.top1_b[static_cast<size_t>(t)] == top_b);
            agree += top_a == top_b;
        }
        CHECK(c.mean_kl == doctest::Approx(mean).epsilon(1e-6));
        CHECK(c.kl[static_cast<size_t>(c.max_kl_position)] == *std::max_element(c.kl.begin(), c.kl.end()));
        CHECK(c.top1_agreement == doctest::Approx(static_cast<double>(agree) / static_cast<double>(T)));
        if (T == 1) {
            CHECK(std::isnan(c.loss_a));
            CHECK(output_comparison_json(c, nullptr)["loss_a"].is_null());
        } else {
            CHECK(c.loss_a == doctest::Approx(loss_a).epsilon(1e-6));
            CHECK(c.loss_b == doctest::Approx(loss_b).epsilon(1e-6));
        }
        const OutputComparison same = compare_outputs(a, a, tokens, choices);
        for (double kl : same.kl) CHECK(kl == doctest::Approx(0.0).epsilon(1e-9));
        CHECK(same.top1_agreement == 1.0);
    }
}

TEST_CASE("compare_generations: the first step where two continuations differ, or where one ends") {
    CHECK(compare_generations(4, {5, 6, 7, 8}, {5, 6, 7, 8}).first_divergence == -1);
    CHECK(compare_generations(4, {5, 6, 7, 8}, {5, 9, 7, 8}).first_divergence == 1);
    CHECK(compare_generations(4, {5, 6}, {5, 6, 7, 8}).first_divergence == 2);
    CHECK(compare_generations(4, {}, {3}).first_divergence == 0);
    const GenerationComparison g = compare_generations(3, {1, 2, 3}, {1, 2, 4});
    OutputComparison o;
    o.kl = {0.5};
    o.top1_a = o.top1_b = {1};
    const nlohmann::json j = output_comparison_json(o, &g);
    CHECK(j["generation"]["first_divergence"] == 2);
    CHECK(j["generation"]["b"] == nlohmann::json({1, 2, 4}));
    CHECK(output_comparison_json(o, nullptr).count("generation") == 0);
}

TEST_CASE(
    "summarize_comparison ranks heads by the chosen measure, names label changes, the lowest top-1 and the heads over "
    "the limit") {
    HeadComparison c;
    c.first.head_ids = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    c.first.labels = {"mixed", "local", "mixed", "sink"};
    c.second.labels = {"mixed", "previous-token", "mixed", "diffuse"};
    c.first.total_queries = c.second.total_queries = 12;  // long enough to tell
    const std::vector<double> metric = {0.2, std::nan(""), 0.5, 0.1}, top1 = {1.0, 0.5, 0.25, 0.75};
    const CompareSummary s = summarize_comparison(c, metric, "js_distance", top1, 0.15);
    CHECK(s.ranked == std::vector<int64_t>{2, 0, 3, 1});
    CHECK(s.label_changes == std::vector<int64_t>{1, 3});
    CHECK(s.lowest_top1 == 2);
    CHECK(s.failing == std::vector<int64_t>{0, 2});
    const nlohmann::json j = compare_summary_json(s, c, metric, top1);
    CHECK(j["largest"]["head"] == "L1H0");
    CHECK(j["largest"]["value"] == 0.5);
    CHECK(j["label_changes"][0]["head"] == "L0H1");
    CHECK(j["label_changes"][0]["label_b"] == "previous-token");
    CHECK(j["lowest_top1_agreement"]["head"] == "L1H0");
    CHECK(j["heads_above"] == nlohmann::json({"L0H0", "L1H0"}));
    CHECK(j["ranked"][3]["head"] == "L0H1");
    CHECK(j["ranked"][3]["value"].is_null());
    const std::string text = compare_summary_text(s, c, metric, top1);
    CHECK(text.rfind("summary: 4 heads compared\n", 0) == 0);
    CHECK(text.find("largest change: L1H0, js_distance 0.5") != std::string::npos);
    CHECK(text.find("L0H1 local -> previous-token, L1H1 sink -> diffuse") != std::string::npos);
    CHECK(text.find("lowest top-1 agreement: L1H0, 0.25") != std::string::npos);
    CHECK(text.find("limit 0.15 on js_distance: 2 of 4 heads above: L0H0 L1H0") != std::string::npos);
    CHECK(text.find("too short") == std::string::npos);
    // On 3 tokens the labels are guesses, as model says: marked "?", with the caveat under them.
    c.first.total_queries = c.second.total_queries = 3;
    const std::string guessed = compare_summary_text(s, c, metric, top1);
    CHECK(guessed.find("L0H1 local? -> previous-token?, L1H1 sink? -> diffuse?\n  too short to tell: the input has 3 "
                       "tokens, labelling heads needs at least 8 (") != std::string::npos);
    CHECK(guessed.find("; the labels and their changes are guesses\n") != std::string::npos);
    // Without --fail-above or top-1 (two single layers), those lines are left out.
    const CompareSummary plain = summarize_comparison(c, metric, "js_distance", {}, -1);
    CHECK(plain.failing.empty());
    CHECK(compare_summary_json(plain, c, metric, {})["heads_above"].is_null());
    CHECK(compare_summary_text(plain, c, metric, {}).find("limit") == std::string::npos);
}

}  // TEST_SUITE("analysis")
