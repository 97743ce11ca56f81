// The outputs of attention rollout and flow (attention_rollout.hpp): [L, T, T] arrays as .npy,
// one picture per layer, and the stats.json entries.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "layer_result.hpp"
#include "output_dir.hpp"
#include "report.hpp"

namespace attn_viz {

// layers: the model's layers (self-attention, one visibility); tokens: T labels.
// Writes rollout.npy [L, T, T] and, unless --stats-only (options.pictures false),
// rollout/layer_NN.png; returns {"attention_rollout": {"file", "pictures", "shape", "last_row",
// "findings"}} for stats.json.
nlohmann::json write_rollout_outputs(OutputDir& out, const std::vector<const LayerResult*>& layers,
                                     const std::vector<std::string>& tokens, const ReportOptions& options);

// The same for attention flow: flow.npy, flow/layer_NN.png and {"attention_flow": {...}}.
// on_rows (optional): told as the flow problems are solved, (rows done, L T).
nlohmann::json write_flow_outputs(OutputDir& out, const std::vector<const LayerResult*>& layers,
                                  const std::vector<std::string>& tokens, const ReportOptions& options,
                                  const std::function<void(int64_t done, int64_t total)>& on_rows = {});

}  // namespace attn_viz
