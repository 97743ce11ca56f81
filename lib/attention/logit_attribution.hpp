// Direct logit attribution: how much each component of the residual stream writes, directly,
// toward the logit of one token at each position, through the final norm with its scale frozen
// as TransformerLens' apply_ln_to_stack does. The final residual x_t is a sum of components
//   x_t = embedding_t + sum_l (sum_h z_lh,t W_O^lh + b_O^l + mlp_l,t)
// (mlp_l: what block l adds besides its attention, its feed-forward). With s_t the final norm's
// scale of the whole x_t (1 / sqrt(mean x_t^2 + eps), or of the variance for LayerNorm) held
// fixed, the logit of token v is linear in the components:
//   logit_t(v) = sum_c s_t (center(c_t) * w) . U[:, v] + b . U[:, v]
// (center: minus the mean over D for LayerNorm, nothing for RMSNorm; w, b the final norm's
// weight and bias; U the classifier). Every term here is one component's direct contribution,
// and they sum to the model's logit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "whole_model.hpp"

namespace attn_viz {

struct LogitAttribution {
    int64_t layers = 0, heads = 0, tokens = 0;  // L, H, T
    std::vector<int> targets;                   // [T] the token whose logit position t attributes
    std::vector<double> logits;                 // [T] the model's logit of that token
    std::vector<double> head;                   // [L, H, T] each head's direct contribution
    std::vector<double> attention_bias;         // [L, T] b_O^l's (0 where the model has none)
    std::vector<double> mlp;                    // [L, T] block l's feed-forward
    std::vector<double> embedding;              // [T] the embeddings' (tokens, learned positions)
    std::vector<double> norm_bias;              // [T] the final LayerNorm bias's (0 for RMSNorm)

    double head_at(int64_t l, int64_t h, int64_t t) const {
        return head[static_cast<size_t>((l * heads + h) * tokens + t)];
    }
    // The sum of every component at position t (equal to logits[t] up to rounding).
    double component_sum(int64_t t) const;
};

// The targets by default: at t < T-1 the text's next token tokens[t+1], at T-1 the model's
// top prediction (argmax of logits [T, V]'s last row).
std::vector<int> next_token_targets(const ModelRun& run);

// Why `weights`' logits do not decompose into the components above, or "" when they do: a
// post-norm model (BERT: norms after each block's attention), a norm on each attention output
// before the residual add (Gemma's sandwich blocks: each head's share is rescaled per token), or
// final-logit soft-capping (a tanh of the whole logit).
std::string logit_attribution_obstacle(const ModelWeights& weights);

// targets: [T] token ids below V. Every component's direct contribution to logits_t(targets_t),
// from the run's layer contexts, layer outputs and residual streams (run from model.run) and the
// model's final norm and classifier. The model must have logits and no logit_attribution_obstacle
// (Error(internal) otherwise).
LogitAttribution attribute_logits(WholeModel& model, OnednnBackend& backend, const ModelRun& run,
                                  const std::vector<int>& targets);

}  // namespace attn_viz
