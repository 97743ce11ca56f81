// The outputs of activation patching (activation_patching.hpp), of one text or averaged over a
// corpus (corpus_patching.hpp): patching.csv ranked by how far patching a head moves the metric,
// layers x heads pictures of that change and of the KL divergence, and the stats.json entry with
// the findings.
#pragma once

#include <nlohmann/json.hpp>

#include "activation_patching.hpp"
#include "corpus_patching.hpp"
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

// The corpus's means as one report: clean and corrupted the metric's means, each head's delta and
// KL their means, its fraction the mean delta over (mean corrupted - mean clean).
PatchingReport mean_patching_report(const CorpusPatching& patching);

// Writes patching.csv (rank, index, layer, head, delta_mean, delta_std, fraction, kl_mean, kl_std,
// pairs; ranked by |delta_mean|) and, unless --stats-only, patching_delta.png and patching_kl.png
// of the means; returns {"activation_patching": {"metric", "pairs", "clean", "corrupted" ({"mean",
// "std"} each), "heads" (ranked), "findings"}}.
nlohmann::json write_corpus_patching_outputs(OutputDir& out, const CorpusPatching& patching,
                                             const ReportOptions& options);

}  // namespace attn_viz
