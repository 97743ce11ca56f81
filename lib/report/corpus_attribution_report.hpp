// The outputs of direct logit attribution over a corpus (corpus_attribution.hpp), written by model
// --inputs and by merge alike: logit_attribution.csv with each component's mean and std over the
// attributed positions, the layers x heads picture of the heads' means, and the stats.json entry.
#pragma once

#include <nlohmann/json.hpp>

#include "corpus_stats.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// The heads writing most toward and against the target on average, and the shares of the heads,
// feed-forwards and embeddings in the mean logit.
std::vector<std::string> corpus_attribution_findings(const CorpusAttribution& a);

// Writes logit_attribution.csv (component, layer, head, mean, std, count; component: embedding,
// head, heads (a layer's heads summed), attention_bias, mlp, norm_bias, logit) and, unless
// --stats-only, logit_attribution_heads.png (the heads' means) into `out`; returns
// {"logit_attribution": {"target", "positions", "logit", "embedding", "norm_bias" ({"mean",
// "std"} each), "layers", "heads" (ranked by mean, with std), "findings"}}.
nlohmann::json write_corpus_attribution_outputs(OutputDir& out, const CorpusAttribution& a,
                                                const ReportOptions& options);

// What a corpus's accumulator holds besides the per-head statistics (its logit attribution and
// activation patching), written into `out`; returns the stats.json entries ({} when there is none).
nlohmann::json write_corpus_analysis_outputs(OutputDir& out, const CorpusAccumulator& corpus,
                                             const ReportOptions& options);

}  // namespace attn_viz
