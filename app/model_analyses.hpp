// The options of the whole-model analyses of `attn-viz model` (the catalog's rows,
// analysis_catalog.hpp) beyond the per-layer report: true head ablation
// (--ablate, --ablate-mode), direct logit attribution (--logit-attribution, --target),
// activation patching (--patch-from, --patch-from-tokens, --patch-from-inputs, --patch-metric), composition scores
// (--composition), attention rollout and flow across layers (--rollout, --flow) and QK attribution
// (--qk-attribution, --query-position, --key-position).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analyses.hpp"

namespace attn_viz_cli {

struct ModelAnalysisOptions {
    std::string ablate;  // "", "all" or "L:H,..."
    std::string ablate_mode = "zero";
    bool logit_attribution = false;
    std::string target_token;  // --target as given: a token id or a quoted token text; "" for none
    std::optional<std::string> patch_from, patch_from_tokens;  // the corrupted input, as text or ids
    std::string patch_from_inputs;                             // corpus mode: the corrupted corpus; "" for none
    std::string patch_metric = "loss";                         // --patch-metric as given
    bool composition = false;
    bool rollout = false, flow = false;
    int64_t flow_max_tokens = 0;
    std::string qk_attribution;                           // --qk-attribution: the heads, "" for none
    std::optional<int64_t> query_position, key_position;  // --query-position, --key-position
};

// Adds --ablate, --ablate-mode, --logit-attribution, --target, --patch-from, --patch-from-tokens,
// --patch-from-inputs, --patch-metric, --composition, --rollout, --flow, --flow-max-tokens,
// --qk-attribution, --query-position and --key-position.
void add_model_analysis_options(CLI::App* cmd, ModelAnalysisOptions& options);

// The flag that asks for `kind` as the user gave it (--patch-from or --patch-from-tokens; over a
// corpus: --patch-from-inputs), in front of an analysis's refusal (WholeModelAnalysis::obstacle).
std::string analysis_flag(attn_viz::AnalysisKind kind, const ModelAnalysisOptions& options, bool corpus_mode);

// The flags given among `kinds`, comma-separated ("--ablate, --rollout").
std::string analysis_flags(const std::vector<attn_viz::AnalysisKind>& kinds, const ModelAnalysisOptions& options);

// The analyses the options ask for, in catalog order.
std::vector<attn_viz::AnalysisKind> asked_analyses(const ModelAnalysisOptions& options);

// The flags of every analysis without a corpus form ("--rollout, --flow"), for the message
// refusing them over a corpus.
std::string single_input_analysis_flags();

// Refuses (CLI::ValidationError, exit 2) --patch-from and --patch-from-tokens in corpus mode
// (`corpus_mode`) and --patch-from-inputs outside it, saying what to use instead.
void check_corpus_analyses(const ModelAnalysisOptions& options, bool corpus_mode);

// The analyses the options ask for, each parsed once against the opened model and its `tokenizer`:
// --ablate's heads, --target and --patch-metric (whose tokens may be named by their text;
// Error(usage) naming the option for a token outside the vocabulary or a text that is not one
// token), the corrupted input of --patch-from (cut to the context with `truncate`, as --text is)
// or --patch-from-tokens, checked against the model; over a corpus, --patch-from-inputs read in
// `shard` with `limits`.
attn_viz::AnalysisSet resolve_analyses(const ModelAnalysisOptions& options, const attn_viz::ModelTokenizer& tokenizer,
                                       const attn_viz::WholeModel& model, bool truncate, attn_viz::CorpusShard shard,
                                       const attn_viz::LoadLimits& limits);

// Refuses (Error usage) before any work what `analyses` cannot do on `model` over `ids` (or over a
// corpus, `corpus_mode`): each analysis's obstacle behind its flag (--ablate, --logit-attribution
// or patching on a model without logits, ...); a --patch-metric without patching; --flow on
// more than --flow-max-tokens tokens.
void check_model_analyses(const ModelAnalysisOptions& options, const attn_viz::AnalysisSet& analyses,
                          const attn_viz::WholeModel& model, const std::vector<int>& ids, bool corpus_mode);

// Refuses (Error usage) --generate N > 0 on a model without next-token logits, naming its type.
void check_generate(const attn_viz::WholeModel& model, int generate);

}  // namespace attn_viz_cli
