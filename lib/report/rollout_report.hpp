// The outputs of attention rollout and flow (attention_rollout.hpp): [L, T, T] arrays as .npy,
// one picture per layer, and the stats.json entries.
#pragma once

#include <nlohmann/json.hpp>

#include "layer_result.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// layers: the model's layers (self-attention, one visibility); tokens: T labels.
// With `with_rollout` writes rollout.npy [L, T, T] and rollout/layer_NN.png, with `with_flow`
// flow.npy and flow/layer_NN.png (the pictures unless --stats-only: options.pictures false);
// returns {"attention_rollout": {...}, "attention_flow": {...}} (those written) for stats.json.
nlohmann::json write_rollout_outputs(OutputDir& out, const std::vector<const LayerResult*>& layers,
                                     const std::vector<std::string>& tokens, const ReportOptions& options, bool with_rollout,
                                     bool with_flow);

}  // namespace attn_viz
