// Turns computed layers into a run directory: per-head heatmaps, stats.json, dumps. Shared by
// `attn-viz run` (one layer) and `attn-viz model` (every layer, in layer_NN/ folders).
#pragma once

#include <string>
#include <vector>

#include "attention.hpp"
#include "output_dir.hpp"
#include "timings.hpp"

namespace attn_viz {

struct ReportOptions {
    std::string dump_attention;  // .npy path or ""
    std::string dump_output;     // .npy path or ""
    int threads = 0;             // PNG encoding and statistics threads (0 = all cores)
};

struct ReportInput {
    std::vector<const LayerResult*> layers;  // one for `run`, L for `model`
    std::vector<std::string> query_tokens;   // T labels
    std::vector<std::string> key_tokens;     // S labels (== query tokens for self-attention)
    bool layer_folders = false;              // layer_00/head_00.png instead of head_00.png
};

// Writes every output into `out` (staged; the caller commits) and returns the human-readable
// table of per-head numbers for stdout.
std::string write_report(OutputDir& out, const ReportInput& input, const ReportOptions& options, Timings& timings);

}  // namespace attn_viz
