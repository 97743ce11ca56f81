// The outputs of true head ablation (head_ablation.hpp): ablation.csv ranked by the change of the
// next-token loss, layers x heads pictures of that change and of the KL divergence, and the
// stats.json entry.
#pragma once

#include <nlohmann/json.hpp>

#include "corpus_ablation.hpp"
#include "head_ablation.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// The heads of `report`, most harmful to remove first: by delta_loss descending, then kl
// descending, then layer and head (undefined losses rank by kl).
std::vector<HeadAblationEffect> ranked_ablations(const AblationReport& report);

// What the ablation found, in one or two sentences: the head whose removal raises the loss most
// (with the clean loss), how many heads move it by more than 1%, and the largest KL. ranked:
// ranked_ablations(report).
std::vector<std::string> ablation_findings(const AblationReport& report, const std::vector<HeadAblationEffect>& ranked);

// Writes ablation.csv, and unless --stats-only (options.pictures false) ablation_delta_loss.png
// and ablation_kl.png (layers x heads; heads not ablated are drawn as 0), into `out` (in its
// `folder`, e.g. "cross/", or at the top) and returns {"ablation": {"mode", "clean_loss", "heads"
// (ranked), "findings"}} for stats.json.
nlohmann::json write_ablation_outputs(OutputDir& out, const AblationReport& report, int64_t layers, int64_t heads,
                                      const ReportOptions& options, const std::string& folder = "");

// The corpus's mean report: each head's measures and the clean loss averaged over the sequences.
AblationReport mean_ablation_report(const CorpusAblation& ablation);

// Over a corpus: ablation.csv ranked by the mean change of the loss, with each measure's mean and
// population std ("<measure>_mean", "<measure>_std", for every ablation_measures()) and the
// sequences counted, the two pictures of the means, and {"ablation": {"mode", "sequences",
// "clean_loss" ({"mean", "std"}), "heads" (ranked), "findings"}} for stats.json.
nlohmann::json write_corpus_ablation_outputs(OutputDir& out, const CorpusAblation& ablation,
                                             const ReportOptions& options);

}  // namespace attn_viz
