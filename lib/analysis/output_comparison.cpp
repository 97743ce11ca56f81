// The next-token distributions of two models compared position by position.
#include "output_comparison.hpp"

#include <algorithm>
#include <numeric>

#include "head_ablation.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

// logits: [T, V]. Per row, the index of the largest logit among the first `choices` (all when 0).
std::vector<int> most_likely_tokens(const Tensor& logits, int64_t choices) {
    const int64_t T = logits.dim(0), vocab = logits.dim(1);
    const int64_t end = choices > 0 ? std::min(choices, vocab) : vocab;
    std::vector<int> top(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
        const float* row = logits.ptr() + t * vocab;
        top[static_cast<size_t>(t)] = static_cast<int>(std::max_element(row, row + end) - row);
    }
    return top;
}

}  // namespace

OutputComparison compare_outputs(const Tensor& logits_a, const Tensor& logits_b, const std::vector<int>& tokens,
                                 int64_t choices) {
    OutputComparison c;
    c.kl = next_token_kl(logits_a, logits_b);
    c.mean_kl = std::accumulate(c.kl.begin(), c.kl.end(), 0.0) / static_cast<double>(c.kl.size());
    c.max_kl_position = std::max_element(c.kl.begin(), c.kl.end()) - c.kl.begin();
    c.loss_a = next_token_loss(logits_a, tokens);
    c.loss_b = next_token_loss(logits_b, tokens);
    c.top1_a = most_likely_tokens(logits_a, choices);
    c.top1_b = most_likely_tokens(logits_b, choices);
    int64_t agree = 0;
    for (size_t t = 0; t < c.top1_a.size(); ++t) agree += c.top1_a[t] == c.top1_b[t];
    c.top1_agreement = static_cast<double>(agree) / static_cast<double>(c.top1_a.size());
    return c;
}

GenerationComparison compare_generations(int steps, std::vector<int> a, std::vector<int> b) {
    GenerationComparison g{steps, std::move(a), std::move(b), -1};
    const auto [end_a, end_b] = std::mismatch(g.a.begin(), g.a.end(), g.b.begin(), g.b.end());
    if (end_a != g.a.end() || end_b != g.b.end()) g.first_divergence = end_a - g.a.begin();
    return g;
}

nlohmann::json output_comparison_json(const OutputComparison& o, const GenerationComparison* generation) {
    nlohmann::json kl = nlohmann::json::array();
    for (double x : o.kl) kl.push_back(json_number(x));
    nlohmann::json doc = {{"mean_kl", json_number(o.mean_kl)},
                          {"max_kl", json_number(o.kl[static_cast<size_t>(o.max_kl_position)])},
                          {"max_kl_position", o.max_kl_position},
                          {"kl", std::move(kl)},
                          {"loss_a", json_number(o.loss_a)},
                          {"loss_b", json_number(o.loss_b)},
                          {"top1_agreement", json_number(o.top1_agreement)},
                          {"top1_a", o.top1_a},
                          {"top1_b", o.top1_b}};
    if (generation)
        doc["generation"] = {
            {"steps", generation->steps},
            {"a", generation->a},
            {"b", generation->b},
            {"first_divergence",
             generation->first_divergence < 0 ? nlohmann::json() : nlohmann::json(generation->first_divergence)}};
    return doc;
}

}  // namespace attn_viz
