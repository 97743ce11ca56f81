// What compare adds at the models' output, for two whole models with logits on one input: the
// KL divergence of their next-token distributions at each position, each model's loss on the
// input, how often their most likely next tokens agree, and where their greedy continuations
// part (docs/analysis.md, "compare of two models").
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor.hpp"

namespace attn_viz {

struct OutputComparison {
    std::vector<double> kl;           // [T] KL(p_A,t || p_B,t) in nats: row t predicts token t + 1
    double mean_kl = 0;               // over the T positions
    int64_t max_kl_position = 0;      // the position of the largest KL
    double loss_a = 0, loss_b = 0;    // each model's next-token loss on the input, nats (NaN when T = 1)
    std::vector<int> top1_a, top1_b;  // [T] each model's most likely next token
    double top1_agreement = 0;        // fraction of the T positions where top1_a == top1_b
};

// logits_a, logits_b: [T, V] of the two models over `tokens` (T ids). choices > 0: the most likely
// token is taken among the ids below it (the tokenizer's tokens), as greedy generation does.
OutputComparison compare_outputs(const Tensor& logits_a, const Tensor& logits_b, const std::vector<int>& tokens,
                                 int64_t choices);

// Two greedy continuations of one prompt (each the generated ids only, without the prompt).
struct GenerationComparison {
    int steps = 0;                  // the continuation length asked for
    std::vector<int> a, b;          // what each model generated (shorter when it ended the text)
    int64_t first_divergence = -1;  // 0-based step where they first differ (or one ends); -1: identical
};

GenerationComparison compare_generations(int steps, std::vector<int> a, std::vector<int> b);

// {"mean_kl", "max_kl", "max_kl_position", "kl" [T], "loss_a", "loss_b", "top1_agreement",
//  "top1_a" [T], "top1_b" [T], "generation" (when given)}; undefined numbers are null.
nlohmann::json output_comparison_json(const OutputComparison& output, const GenerationComparison* generation);

}  // namespace attn_viz
