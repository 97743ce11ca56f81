// What a run found, in words: which heads are previous-token / next-token / self / sink /
// induction / duplicate-token / diffuse heads, which groups of heads are redundant, where nothing
// was found (with the best candidate and the threshold it missed), and when the input is too short
// to tell. Printed after the stdout table, written to stats.json as "findings", shown in
// report.html. Rules: docs/analysis.md#findings.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "head_analysis.hpp"

namespace attn_viz {

// Inputs with fewer tokens than this (mean tokens per sequence in corpus mode) are too short to
// tell: under a causal mask, attention spread evenly over 7 tokens already puts 0.37 on the first
// token and 0.26 on the previous one, within reach of the 0.5 thresholds (at 4 tokens evenly
// spread attention passes the sink threshold). Labels are then not stated as findings.
inline constexpr int64_t min_tokens_to_label = 8;

// True when the analysed input has fewer than min_tokens_to_label tokens (per sequence, on average).
bool too_short_to_label(const ModelAnalysis& analysis);

// "too short to tell: the input has 3 tokens, labelling heads needs at least 8 (...); <guesses> are
// guesses": the caveat of an input too_short_to_label, `guesses` naming what it makes guesses of.
std::string too_short_sentence(const ModelAnalysis& analysis, const std::string& guesses);

// Head n's label as the pictures and tables show it: with a "?" on an input too short to tell.
std::string shown_label(const ModelAnalysis& analysis, int64_t n);

// What a pair of heads shows about being alike (docs/analysis.md#findings): alike maps alone are
// "attend alike"; "redundant" needs the outputs shown alike too, which output_cosine does within a
// layer only; two sink heads' maps are alike through the first token ([CLS] in an encoder) alone.
struct PairEvidence {
    bool attend_alike = false;  // js_distance <= redundancy_js
    bool same_layer = false;
    bool both_sinks = false;  // both heads' first_token_mass >= the sink threshold
    double output_cosine = std::numeric_limits<double>::quiet_NaN();  // NaN: not computed (other layers)
    bool redundant = false;  // attend alike, not both sinks, output_cosine >= redundancy_output_cosine
};
PairEvidence pair_evidence(const ModelAnalysis& analysis, int64_t a, int64_t b);

// What the findings call a group of analysis.redundant_groups (heads that attend alike):
// "redundant" (one layer, every output cosine at least the cut, not two sink heads), "attend
// alike (sink heads)" (two or more of them sink heads) or "attend alike".
std::string group_claim(const ModelAnalysis& analysis, const std::vector<int64_t>& group);

struct Finding {
    // "previous-token", "next-token", "self", "sink", "induction", "duplicate-token", "diffuse":
    // heads of that kind (found) or none (not found: heads holds the best candidate, if any);
    // "redundant": one group of heads that attend alike and write alike (not found: heads holds
    // the closest pair, or none when groups attend alike without that evidence); "attend-alike":
    // one group of heads with alike maps not shown redundant (in different layers, outputs not
    // alike or not computed, or sink heads); "too-short": the input is too short to label heads (no head kinds follow);
    // "mixed": the heads no rule labels (found; scores: each one's nearest pattern's statistic,
    // which the sentence names; absent when no head is mixed); "sparse-error" (with the
    // sparse-attention error): heads holds the head needing the most keys, threshold the tolerance.
    // A kind no head can be scored on (induction without repeated tokens) is not found, with no heads.
    std::string kind;
    bool found = false;
    std::vector<int64_t>
        heads;  // indices into analysis.head_ids: the heads found, strongest first, or the best candidate
    std::vector<double> scores;  // one per head: its value of `statistic`
    std::string statistic;       // which statistic ("previous_token_mass"; "js_distance" for redundant; "" otherwise)
    double score = 0;            // the strongest head's score (redundant: the group's largest JS distance); NaN: none
    double threshold = 0;        // what a head must reach (redundant: the clustering cut); NaN: none
    bool higher_is_stronger = true;  // false for js_distance
    std::string sentence;            // the plain-English sentence printed on stdout
};

// The findings of an analysis, in a fixed order: too-short (if so), then each head kind (found or
// not) and the mixed heads, then the redundant groups, then the sparse-attention error.
std::vector<Finding> find_findings(const ModelAnalysis& analysis);

// stats.json "findings": [{"kind", "found", "heads": [{"index", "layer", "head", "score"}],
// "statistic", "score", "threshold", "sentence"}]; NaN numbers are null.
nlohmann::json findings_json(const ModelAnalysis& analysis, const std::vector<Finding>& findings);

// The sentences, one per line, under a "findings:" heading.
std::string findings_text(const std::vector<Finding>& findings);

// "L4H0": how findings and the stdout table name a head.
std::string head_tag(const HeadId& id);

}  // namespace attn_viz
