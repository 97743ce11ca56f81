// QK attribution: why a head attends where it does. The pre-softmax score of head h of block l
// from query position i to key position j,
//   score = scale * R_i q_i . R_j k_j      (scale: the layer's score_scale, else 1/sqrt(d_h); R_p RoPE at p)
// is bilinear in the residual stream entering block l, which is a sum of components
// (residual_components.hpp): the token embedding, the learned positions, each earlier head's
// output z W_O^h, each earlier attention output bias b_O and each earlier feed-forward. With the
// block's first norm N1 frozen at each position (its scale s_p from the whole row x_p, as
// logit_attribution.hpp freezes the final norm),
//   q_i = sum_c s_i (center(c_i) * w) W_q^h + b W_q^h + b_q^h
//   k_j = sum_c s_j (center(c_j) * w) W_k^g + b W_k^g + b_k^g     (g: the key/value head h reads)
// (w, b: N1's weight and bias; center: minus the mean over D for LayerNorm), so the score is the
// sum over query-side terms a and key-side terms b of scale * R_i q_a . R_j k_b: a matrix [Q, K]
// that sums to the score exactly, computed in double from the run's float activations.
//
// Component names (the same list on both sides, in stream order, then the side's biases; a
// component the model lacks is left out):
//   "embed"          the token embedding (times the embedding scale, plus the token type row; the
//                    whole normalised embedding where the model has an embedding norm)
//   "pos_embed"      the learned position embedding (models with learned positions)
//   "L0H3"           head 3 of block 0: z W_O^h
//   "L0 attn bias"   block 0's attention output bias b_O
//   "L0 mlp"         block 0's feed-forward output (what the block added besides its attention)
//   "L5 norm bias"   block 5's N1 bias b, through W_q (query side) or W_k (key side); LayerNorm only
//   "query bias"     b_q of the head (query side), "key bias" b_k of its key head (key side)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "whole_model.hpp"

namespace attn_viz {

struct QkAttribution {
    int64_t layer = 0, head = 0;                   // the head attributed (block l, query head h)
    int64_t kv_head = 0;                           // the key/value head it reads (h / (H / KV))
    int64_t query_position = 0, key_position = 0;  // i, j
    std::vector<std::string> query_components;     // [Q]
    std::vector<std::string> key_components;       // [K]
    std::vector<double> terms;                     // [Q, K]: scale * R_i q_a . R_j k_b
    double scale = 0;                              // the score scale the layer uses
    double score = 0;      // the model's score scale * R_i q_i . R_j k_j, from the whole stream rows (double)
    double term_sum = 0;   // the sum of every term (equal to score up to double rounding)
    double attention = 0;  // the model's attention weight from i to j (the run's map)
    // The earlier layers' heads that attend from the key position j to the token before it with at
    // least previous_token_threshold of their weight (the previous-token heads a K-composing
    // induction head reads through its keys), in layer and head order; none at j = 0.
    std::vector<std::string> previous_token_heads;
    static constexpr double previous_token_threshold = 0.5;

    int64_t query_count() const { return static_cast<int64_t>(query_components.size()); }
    int64_t key_count() const { return static_cast<int64_t>(key_components.size()); }
    double term(int64_t a, int64_t b) const { return terms[static_cast<size_t>(a * key_count() + b)]; }
    // [Q] each query-side component's total with every key-side one (the matrix's row sums).
    std::vector<double> query_totals() const;
    // [K] each key-side component's total with every query-side one (the column sums).
    std::vector<double> key_totals() const;
};

// Why `weights`' attention scores do not decompose into the terms above, or "" when they do: a
// post-norm model (BERT: its norms come after each block's attention, so the stream a block reads
// is not a sum of the earlier outputs), a norm on each attention output before the residual add
// (Gemma's sandwich blocks), a per-head norm of queries and keys (QK-norm: Qwen3, Gemma 3; not
// linear in the stream) or soft-capped scores (Gemma 2: a tanh of the whole score). A streamed
// model's blocks are not in memory: its first block is read for the per-layer checks.
std::string qk_attribution_obstacle(const ModelWeights& weights);

// The key position attributed when none is given: the key the head attends to most from
// `query_position` (the argmax of its attention row in the run; the earliest of equal weights).
int64_t default_key_position(const ModelRun& run, int64_t layer, int64_t head, int64_t query_position);

struct QkPositions {
    int64_t query = 0, key = 0;
};

// The positions attributed for head (layer, head) of `run` (its layers' maps and visibility): `query` (default T-1, the
// last token) and `key` (default default_key_position). Throws Error(usage) for a head the model does not have
// ("L9H1: the model has 5 layers"), a position outside 0..T-1, or a key the query does not see:
// "key position 5 is after query position 3: head L1H2 is causal, its query sees keys 0..3" (and
// likewise outside a sliding window).
QkPositions qk_positions(const ModelRun& run, int64_t layer, int64_t head, std::optional<int64_t> query = std::nullopt,
                         std::optional<int64_t> key = std::nullopt);

// The score of head (layer, head) from query position `query` to key position `key` (defaults
// and checks as qk_positions) decomposed into its query-side x key-side terms, from the run's
// residual streams, layer contexts and outputs (run from model.run) and the model's weights. The
// model must have no qk_attribution_obstacle (Error(internal) otherwise).
QkAttribution attribute_qk(const WholeModel& model, const ModelRun& run, int64_t layer, int64_t head,
                           std::optional<int64_t> query = std::nullopt, std::optional<int64_t> key = std::nullopt);

}  // namespace attn_viz
