// A one-word label per head from its statistics (previous-token, next-token, self, sink,
// induction, diffuse, local, mixed; for an encoder Clark et al. 2019's [CLS], [SEP], delimiter
// and broad), with documented, overridable thresholds (docs/metrics.md).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "head_stats.hpp"

namespace attn_viz {

struct LabelThresholds {
    double induction = 0.4;          // induction score >= this: "induction"
    double previous_token = 0.5;     // previous_token_mass >= this: "previous-token"
    double next_token = 0.5;         // next_token_mass >= this: "next-token"
    double self = 0.5;               // self_mass >= this: "self"
    double sink = 0.5;               // first_token_mass >= this: "sink"
    double diffuse = 0.8;            // normalized_entropy >= this: "diffuse"
    double local_distance = 2.0;     // mean_distance <= this: "local"
    double redundancy_js = 0.2;      // clustering cut: groups merge while average JS distance <= this
    double top_pairs = 10;           // how many most-redundant pairs to list
    double sparse_tolerance = 0.05;  // relative output error allowed for keys_needed / window_needed
    // Heads that attend alike are called redundant only when their outputs are shown alike too:
    // output_cosine (computed within a layer) at or above this.
    double redundancy_output_cosine = 0.9;
    // An encoder's (Clark et al. 2019: over half of BERT's attention in layers 6-10 is on [SEP]).
    double sep = 0.5;        // sep_mass >= this: "[SEP]"
    double delimiter = 0.5;  // sep_mass + punctuation_mass >= this: "delimiter"
    double broad = 0.8;      // normalized_entropy >= this: "broad" (an encoder's "diffuse")
};

// Which rules label_head applies. An encoder (bidirectional self-attention whose tokens' roles
// are known) gets Clark et al.'s labels; every other run keeps the decoder's.
struct LabelContext {
    bool encoder = false;
};

// The thresholds' names (as in --threshold name=value and stats.json "thresholds") and members.
std::vector<std::pair<const char*, double LabelThresholds::*>> threshold_fields();

// Sets one threshold from "name=value"; throws Error(usage) naming the assignment on an unknown
// name, a malformed or non-finite number, or a negative top_pairs.
void set_threshold(LabelThresholds& thresholds, const std::string& assignment);

// The first rule that holds, in this order: induction, previous-token, next-token, self, sink,
// diffuse, local; otherwise "mixed". For an encoder: induction, previous-token, next-token, self,
// [SEP], delimiter, [CLS] (cls_mass >= the sink threshold: a BERT sink is a [CLS] head), sink
// (first_token_mass, where the roles show no [CLS]), broad, local, mixed. A NaN statistic never
// satisfies a rule.
std::string label_head(const HeadStats& stats, const LabelThresholds& thresholds, const LabelContext& context = {});

// The rule of label_head a head comes nearest to meeting (what a "mixed" head is closest to):
// the one whose statistic reaches the largest fraction of its threshold (local: threshold over
// mean_distance). label "" when no statistic is defined.
struct NearestPattern {
    const char* label = "";      // "previous-token", "sink", ...
    const char* statistic = "";  // "previous_token_mass", ...
    double score = 0;            // the head's value of `statistic`
    double threshold = 0;        // what the rule needs (local: at most, otherwise at least)
};
NearestPattern nearest_pattern(const HeadStats& stats, const LabelThresholds& thresholds,
                               const LabelContext& context = {});

}  // namespace attn_viz
