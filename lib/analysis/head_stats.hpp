// Per-head statistics of one layer's attention maps (entropy, confidence, positional masses,
// sparsity, logit margin, contribution, ablation importance, duplicate-token and induction scores).
// Formulas: docs/metrics.md. Every statistic is a mean over query rows that have at least one
// visible key; a statistic with no row to average over is NaN ("undefined", written as null).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "layer_result.hpp"
#include "tensor.hpp"
#include "token_role.hpp"

namespace attn_viz {

struct HeadStats {
    double entropy = 0;              // mean_i -sum_j a_ij ln a_ij (nats)
    double normalized_entropy = 0;   // mean_i of that / ln(visible keys of i); 0 where i sees one key
    double confidence = 0;           // mean_i max_j a_ij
    double mean_distance = 0;        // mean_i sum_j a_ij |i - j|
    double previous_token_mass = 0;  // mean over rows with key i-1 visible of a_i,i-1
    double next_token_mass = 0;      // mean over rows with key i+1 visible of a_i,i+1
    double self_mass = 0;            // mean over rows with key i visible of a_ii
    double first_token_mass = 0;     // mean over rows with key 0 visible of a_i0
    double keys_for_90 = 0;          // mean_i of the fewest keys holding 90% of row i's mass
    double logit_margin = 0;         // mean_i logit_margin[h, i]
    double contribution = 0;         // mean_i contribution_norms[h, i]
    double ablation_importance = 0;  // ||C_h||_F / ||output||_F = sqrt(gram[h,h]) / ||output||_F
    double duplicate_token = 0;      // mean over rows with a target of the mass on earlier copies of token i
    double induction = 0;            // mean over rows with a target of the mass on tokens after earlier copies
    // Sparse-attention error (sparse_attention_error.hpp), filled by analyze_model; NaN without values.
    double keys_needed = NAN;        // smallest top-k within thresholds.sparse_tolerance
    double window_needed = NAN;      // smallest sink + window w within the tolerance
    double top1_mass_dropped = NAN;  // mean_i dropped mass of top-1 (= 1 - confidence)
    double top1_error = NAN;         // ||O - O~_1||_F / ||O||_F
    double top1_mass_bound = NAN;    // the logit-margin bound on top1_mass_dropped (mean over rows)
    double top1_error_bound = NAN;   // the matching bound on top1_error
    double top1_bound_holds = NAN;   // fraction of rows within both bounds (1 unless something is wrong)
    // Mass on the tokens of a role (token_role.hpp), mean over rows that see one: NaN without the
    // roles, or when no token has the role. Clark et al. 2019's [CLS], [SEP] and punctuation.
    double cls_mass = NAN;          // on the start tokens ([CLS], <s>)
    double sep_mass = NAN;          // on every separator ([SEP], </s>)
    double last_sep_mass = NAN;     // on the last separator alone
    double punctuation_mass = NAN;  // on the punctuation tokens
};

// Name and member of every statistic, in the order of stats.json / heads.csv columns.
struct HeadStatField {
    const char* name;
    double HeadStats::*member;
};
inline constexpr int head_stat_count = 25;
const std::array<HeadStatField, head_stat_count>& head_stat_fields();

// Token ids of the sequence for the duplicate-token and induction scores: pass them only for
// self-attention (keys are the query sequence). Both scores are NaN when `tokens` is empty, when
// S != T, or when no token repeats.
// result.attention: [H, T, S]; result.logit_margin: [H, T]; result.contribution_norms: [H, T]
// (empty: contribution and ablation_importance are NaN); result.output: [T, D].
// tokens: [T] or empty. roles: [T], each token's role, for the special-token masses (self-attention
// only, as tokens), or empty: those are NaN. Heads are spread over `threads` threads (parallel_for;
// 1 = the calling thread).
std::vector<HeadStats> compute_head_stats(const LayerResult& result, const std::vector<int64_t>& tokens = {},
                                          int threads = 1, const std::vector<TokenRole>& roles = {});

}  // namespace attn_viz
