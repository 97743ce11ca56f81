// The whole-model analyses of `attn-viz model` beyond the per-layer report: true head ablation
// (--ablate, --ablate-mode), direct logit attribution (--logit-attribution, --target),
// activation patching (--patch-from, --patch-from-tokens, --patch-from-inputs, --patch-metric), composition scores
// (--composition) and attention rollout and flow across layers (--rollout, --flow).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "activation_patching.hpp"
#include "corpus_attribution.hpp"
#include "model_tokenizer.hpp"
#include "output_dir.hpp"
#include "report.hpp"
#include "timings.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {

struct ModelAnalysisOptions {
    std::string ablate;  // "", "all" or "L:H,..."
    std::string ablate_mode = "zero";
    bool logit_attribution = false;
    std::string target_token;  // --target as given: a token id or a quoted token text; "" for none
    int64_t target = -1;       // its id (resolve_analysis_inputs); -1: each position's next token
    std::optional<std::string> patch_from, patch_from_tokens;  // the corrupted input, as text or ids
    std::vector<int> corrupted;                                // its ids (resolve_analysis_inputs)
    std::string patch_from_inputs;                             // corpus mode: the corrupted corpus; "" for none
    std::string patch_metric = "loss";                         // --patch-metric as given
    attn_viz::PatchMetric metric;                              // as parsed (resolve_analysis_inputs)
    bool composition = false;
    bool rollout = false, flow = false;
    int64_t flow_max_tokens = 0;
};

// Adds --ablate, --ablate-mode, --logit-attribution, --target, --patch-from, --patch-from-tokens,
// --patch-from-inputs, --patch-metric, --composition, --rollout, --flow and --flow-max-tokens.
void add_model_analysis_options(CLI::App* cmd, ModelAnalysisOptions& options);

// Whether an analysis asked for reads the run's next-token logits (--ablate, --logit-attribution,
// patching), which the forward pass then computes.
bool reads_logits(const ModelAnalysisOptions& options);

// Reads what the analyses' options name with the model's `tokenizer`: --target and --patch-metric
// (when patching is asked for), whose tokens may be named by their text, into `target` and
// `metric` (Error(usage) naming the option for a token outside the model's vocabulary or a text
// that is not one token), and the corrupted input of --patch-from (cut to the context with
// `truncate`, as --text is) or --patch-from-tokens into `corrupted`, checked against the model.
void resolve_analysis_inputs(ModelAnalysisOptions& options, const attn_viz::ModelTokenizer& tokenizer,
                             const attn_viz::ModelDescription& model, bool truncate);

// Refuses (CLI::ValidationError, exit 2) --patch-from and --patch-from-tokens in corpus mode
// (`corpus_mode`) and --patch-from-inputs outside it, saying what to use instead.
void check_corpus_analyses(const ModelAnalysisOptions& options, bool corpus_mode);

// Refuses (Error usage) a bad --ablate list or mode, --ablate, --logit-attribution or patching (of
// one text or of a corpus) on a model without logits (BERT), a --patch-metric without patching, a
// corrupted input whose length differs from the clean input's `ids`, or --flow on more than
// --flow-max-tokens tokens, before any work (after resolve_analysis_inputs).
void check_model_analysis_options(const ModelAnalysisOptions& options, const attn_viz::WholeModel& model,
                                  const std::vector<int>& ids);

// What --logit-attribution attributes, in words: "next token" or "token 300 'x'".
std::string attribution_target(const ModelAnalysisOptions& options, const attn_viz::ModelTokenizer& tokenizer);

// Corpus mode's --logit-attribution: one sequence's run attributed into `corpus`, at every
// position with --target, else at the positions whose next token the sequence holds (all but the last).
void add_corpus_attribution(attn_viz::CorpusAttribution& corpus, const ModelAnalysisOptions& options,
                            attn_viz::WholeModel& model, attn_viz::OnednnBackend& backend,
                            const attn_viz::ModelRun& run);

// What the whole-model analyses run on and write into: the model, the backend every product runs
// on, the tokenizer, the report's options (colormap, ...), the staged outputs and the stage times;
// show_progress: ablated heads, patched heads and flow rows as progress on stderr (progress.hpp).
struct ModelAnalysisRun {
    attn_viz::WholeModel& model;
    attn_viz::OnednnBackend& backend;
    const attn_viz::ModelTokenizer& tokenizer;
    const attn_viz::ReportOptions& report;
    attn_viz::OutputDir& out;
    attn_viz::Timings& timings;
    bool show_progress = false;
};

// The analyses of the weights alone (--composition): written without a forward pass (so a
// streamed run and corpus mode write them as one run does); returns their stats.json entries ({}
// when none was asked).
nlohmann::json write_weight_analyses(const ModelAnalysisOptions& options, const ModelAnalysisRun& r);

// Runs what the options ask for on the clean run (write_weight_analyses' too), writes its files
// and returns the stats.json entries ({} when nothing was asked).
nlohmann::json write_model_analyses(const ModelAnalysisOptions& options, const ModelAnalysisRun& r,
                                    const attn_viz::ModelRun& run);

}  // namespace attn_viz_cli
