// An analysis named by its catalog key with its options as a JSON object, as Python (and a
// server) give them: {"heads": "L1H3,L2H0-7", "mode": "mean"} for "ablation". The options are the
// analyses' own, not the CLI's flags:
//   ablation           heads ("all" or the head notation, default all), mode ("zero" or "mean")
//   logit_attribution  target (a token id, or a token's text; default each position's next token)
//   patching           corrupted_text or corrupted_ids (as many tokens as the clean input), metric
//                      ("loss" or "logit-diff:A,B", default loss)
//   qk_attribution     heads (the head notation), query_position (default the last token),
//                      key_position (default the key the head attends to most from the query)
//   composition, rollout, flow: none
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis_catalog.hpp"

namespace attn_viz {

// The analysis `name` (a catalog key or name) with `options` checked against `model` and
// `tokenizer`; Error(usage) "ablation: ..." naming the analysis and the option for an unknown
// name or option, a value of the wrong type or one its parser refuses.
std::unique_ptr<WholeModelAnalysis> analysis_from_spec(const std::string& name, const nlohmann::json& options,
                                                       const WholeModel& model, const ModelTokenizer& tokenizer);

}  // namespace attn_viz
