// The outputs of direct logit attribution (logit_attribution.hpp): logit_attribution.csv (every
// component at every position), layers x heads pictures of the heads' mean and last-position
// contributions, and the stats.json entry with the heads ranked and the findings.
#pragma once

#include <nlohmann/json.hpp>

#include "logit_attribution.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// What the attribution found: the heads that write most toward and against the targets (mean
// over positions), the share of heads, feed-forwards and embeddings, and the top head at the
// last position. target_labels: [T] the targets' token labels.
std::vector<std::string> logit_attribution_findings(const LogitAttribution& a,
                                                    const std::vector<std::string>& target_labels);

// Writes logit_attribution.csv (position, target_id, component, layer, head, contribution, target
// (the target's text, quoted); component: embedding, head, attention_bias, mlp, norm_bias) and, unless --stats-only,
// logit_attribution_heads.png (mean over positions) and logit_attribution_last.png (last
// position) into `out`; returns {"logit_attribution": {"target", "positions", "layers", "heads"
// (ranked by mean), "findings"}}. target: "next token" or the chosen token's description.
nlohmann::json write_logit_attribution_outputs(OutputDir& out, const LogitAttribution& a,
                                               const std::vector<std::string>& target_labels, const std::string& target,
                                               const ReportOptions& options);

}  // namespace attn_viz
