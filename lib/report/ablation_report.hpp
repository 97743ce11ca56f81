// The outputs of true head ablation (head_ablation.hpp): ablation.csv ranked by the change of the
// next-token loss, layers x heads pictures of that change and of the KL divergence, and the
// stats.json entry; an encoder's the same files with the change of its final hidden states.
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

// An encoder's heads, most disruptive first: by cosine_distance descending, then relative_l2, then
// layer and head.
std::vector<HiddenStateEffect> ranked_encoder_ablations(const EncoderAblationReport& report);

// The head whose removal moves the final hidden states most, how many move them by more than 1%
// (relative_l2 > 0.01), and the largest rise of the masked-LM loss (or that there is no masked-LM
// head). ranked: ranked_encoder_ablations(report).
std::vector<std::string> encoder_ablation_findings(const EncoderAblationReport& report,
                                                   const std::vector<HiddenStateEffect>& ranked);

// Writes ablation.csv (cosine_distance, relative_l2, and with a masked-LM head delta_mlm_loss,
// mlm_loss) and unless --stats-only ablation_cosine_distance.png, ablation_relative_l2.png (and
// ablation_delta_mlm_loss.png, signed) into `out`, and returns {"ablation": {"mode", "measured_on":
// "final_hidden_states", "heads" (ranked), "findings"[, "clean_mlm_loss"]}} for stats.json.
nlohmann::json write_encoder_ablation_outputs(OutputDir& out, const EncoderAblationReport& report, int64_t layers,
                                              int64_t heads, const ReportOptions& options);

}  // namespace attn_viz
