// The outputs of composition scores (composition_scores.hpp): composition.csv (every earlier ->
// later head pair, three kinds), a head-by-head picture per kind, and the stats.json entry with
// the strongest pairs and the findings.
#pragma once

#include <nlohmann/json.hpp>

#include "composition_scores.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// One pair of heads and its score.
struct ComposedPair {
    int64_t earlier = 0, later = 0;  // heads numbered layer-major
    double score = 0;
};

// The computed pairs of one kind, strongest first (then by head numbers).
std::vector<ComposedPair> ranked_compositions(const CompositionScores& scores, CompositionKind kind);

// Per kind, the strongest pair against the mean over all pairs and the chance level.
std::vector<std::string> composition_findings(const CompositionScores& scores);

// Writes composition.csv (kind, earlier_layer, earlier_head, later_layer, later_head, score) and,
// unless --stats-only, composition_q.png, composition_k.png and composition_v.png (row = earlier
// head, column = later head, centred on the chance level; pairs not earlier -> later hatched) into
// `out`; returns {"composition": {"norm_folding", "q"/"k"/"v": {"mean", "chance", "top" (the
// strongest top_pairs)}, "findings"}}. norm_folding: how the norms were folded, in words.
nlohmann::json write_composition_outputs(OutputDir& out, const CompositionScores& scores,
                                         const std::string& norm_folding, const ReportOptions& options);

}  // namespace attn_viz
