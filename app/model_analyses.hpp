// The whole-model analyses of `attn-viz model` beyond the per-layer report: true head ablation
// (--ablate, --ablate-mode) and attention rollout and flow across layers (--rollout, --flow).
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "output_dir.hpp"
#include "report.hpp"
#include "timings.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {

struct ModelAnalysisOptions {
    std::string ablate;              // "", "all" or "L:H,..."
    std::string ablate_mode = "zero";
    bool rollout = false, flow = false;
    int64_t flow_max_tokens = 0;
};

// Adds --ablate, --ablate-mode, --rollout, --flow and --flow-max-tokens.
void add_model_analysis_options(CLI::App* cmd, ModelAnalysisOptions& options);

// Whether any of --ablate, --rollout, --flow was given (corpus mode refuses them).
bool asks_for_model_analyses(const ModelAnalysisOptions& options);

// Refuses (Error usage) a bad --ablate list or mode, --ablate on a model without logits (BERT), or
// --flow on more than --flow-max-tokens tokens, before any work.
void check_model_analysis_options(const ModelAnalysisOptions& options, const attn_viz::WholeModel& model, int64_t tokens);

// Runs what the options ask for on the clean run, writes its files into `out` and returns the
// stats.json entries ({} when nothing was asked). show_progress: ablated heads and flow rows as
// progress on stderr (progress.hpp).
nlohmann::json write_model_analyses(attn_viz::OutputDir& out, const ModelAnalysisOptions& options, attn_viz::WholeModel& model,
                                    attn_viz::OnednnBackend& backend, const attn_viz::ModelRun& run,
                                    const std::vector<std::string>& tokens, const attn_viz::ReportOptions& report,
                                    bool show_progress, attn_viz::Timings& timings);

}  // namespace attn_viz_cli
