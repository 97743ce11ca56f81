// Writing the sparse-attention error curves of a run: stats.json "sparse_attention" and
// sparse.csv. Schemas: docs/analysis.md. Undefined numbers are null / empty fields.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "head_analysis.hpp"

namespace attn_viz {

// {"tolerance", "sizes", "heads": [{index, layer, head, top_k_mass_dropped, top_k_error,
// window_mass_dropped, window_error}]}; null when the analysis has no curves (corpus reports).
nlohmann::json sparse_attention_json(const ModelAnalysis& analysis);

// sparse.csv: index,layer,head,pattern,size,mass_dropped,relative_error, one row per head,
// pattern ("top_k", "window") and size; "" when the analysis has no curves.
std::string sparse_csv(const ModelAnalysis& analysis);

}  // namespace attn_viz
