// The outputs of activation patching (activation_patching.hpp): patching.csv ranked by how far
// patching a head moves the metric, layers x heads pictures of that change and of the KL
// divergence, and the stats.json entry with the findings.
#pragma once

#include <nlohmann/json.hpp>

#include "activation_patching.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// The heads of `report` by |delta| descending (undefined deltas last, by KL), then layer and head.
std::vector<HeadPatchEffect> ranked_patches(const PatchingReport& report);

// What patching found, in words: the head that moves the metric most (and its share of the
// corrupted run's change), how many heads carry more than 10% of it, the largest KL.
std::vector<std::string> patching_findings(const PatchingReport& report, const std::vector<HeadPatchEffect>& ranked);

// Writes patching.csv (rank, index, layer, head, delta, fraction, kl, value) and, unless
// --stats-only, patching_delta.png and patching_kl.png (layers x heads) into `out`; returns
// {"activation_patching": {"metric", "clean", "corrupted", "corrupted_tokens", "heads" (ranked),
// "findings"}}. corrupted_tokens: the corrupted input's token labels.
nlohmann::json write_patching_outputs(OutputDir& out, const PatchingReport& report, int64_t layers, int64_t heads,
                                      const std::vector<std::string>& corrupted_tokens, const ReportOptions& options);

}  // namespace attn_viz
