// What the whole-model analyses (model --ablate, --logit-attribution, --patch-from, --composition,
// --rollout, --flow) found, read from their stats.json entries: lines for stdout and a report.html
// section (with the ranked tables), so both say the same thing.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace attn_viz {

// How many ablated heads the stdout ranking and the report section list.
inline constexpr size_t ablation_heads_shown = 10;
// How many of each kind's strongest compositions the report section lists.
inline constexpr size_t composition_pairs_shown = 5;

// "ablation (zero): clean next-token loss ... nats; the heads that change it most:" and a ranked
// table of the first ablation_heads_shown heads (delta loss, KL), then each analysis' findings,
// one per line; "" when `stats` holds none of the three.
std::string model_analyses_text(const nlohmann::json& stats);

// The whole-model analyses' entries of `stats` ("ablation", "qk_attribution", ...), the ones the
// summary shows, for the --json document beside the heads' summary.
nlohmann::json model_analyses_entries(const nlohmann::json& stats);

// The same as <section>s of HTML (escaped), with a table of each ranked analysis (the first
// ablation_heads_shown heads of ablation, logit attribution and patching, the first
// composition_pairs_shown pairs of each composition kind); "" when `stats` holds none.
std::string model_analyses_html(const nlohmann::json& stats);

}  // namespace attn_viz
