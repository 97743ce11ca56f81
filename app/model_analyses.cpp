#include "model_analyses.hpp"

#include <fmt/format.h>

#include "ablation_report.hpp"
#include "composition_report.hpp"
#include "composition_scores.hpp"
#include "error.hpp"
#include "generation.hpp"
#include "head_ablation.hpp"
#include "logit_attribution.hpp"
#include "logit_attribution_report.hpp"
#include "option_checks.hpp"
#include "option_parsing.hpp"
#include "patching_report.hpp"
#include "progress.hpp"
#include "rollout_report.hpp"
#include "token_file.hpp"
#include "token_reference.hpp"

namespace attn_viz_cli {
namespace {

bool asks_for_patching(const ModelAnalysisOptions& o) { return o.patch_from || o.patch_from_tokens; }

// The corrupted input of --patch-from (encoded as --text is, cut to the context with `truncate`) or
// --patch-from-tokens, checked against the model.
std::vector<int> corrupted_ids(const ModelAnalysisOptions& o, const attn_viz::ModelTokenizer& tokenizer,
                               const attn_viz::ModelDescription& model, bool truncate) {
    const char* option = o.patch_from ? "--patch-from" : "--patch-from-tokens";
    std::vector<int> ids =
        o.patch_from ? attn_viz::encode_for_context(tokenizer, *o.patch_from, model.max_tokens, option, truncate).ids
                     : attn_viz::parse_token_ids(*o.patch_from_tokens, option);
    attn_viz::check_model_tokens(ids, model.vocab_size, model.max_tokens, option);
    return ids;
}

// The token attributed at each position of `run`: --target, or each position's next token.
std::vector<int> attribution_targets(const ModelAnalysisOptions& o, const attn_viz::ModelRun& run) {
    return o.target >= 0 ? std::vector<int>(run.tokens.size(), static_cast<int>(o.target))
                         : attn_viz::next_token_targets(run);
}

// --logit-attribution: each position's next token (or --target) attributed, and its outputs.
nlohmann::json write_logit_attribution(const ModelAnalysisOptions& o, const ModelAnalysisRun& r,
                                       const attn_viz::ModelRun& run) {
    const std::vector<int> targets = attribution_targets(o, run);
    return attn_viz::write_logit_attribution_outputs(
        r.out, attn_viz::attribute_logits(r.model, r.backend, run, targets), r.tokenizer.labels(targets),
        attribution_target(o, r.tokenizer), r.report);
}

// --patch-from / --patch-from-tokens: the corrupted run, every head patched from it, and the outputs.
nlohmann::json write_patching(const ModelAnalysisOptions& o, const ModelAnalysisRun& r, const attn_viz::ModelRun& run) {
    using namespace attn_viz;
    const ModelDescription& c = r.model.description();
    const ModelRun corrupted = r.model.run(o.corrupted, {.contributions = false});
    Progress progress(r.show_progress, "patched head");
    const PatchingReport patching =
        patch_heads(r.model, r.backend, run, corrupted, parse_ablated_heads("all", c.n_layers, c.n_heads), o.metric,
                    [&](int64_t done, int64_t total) { progress.update(done, total); });
    progress.finish();
    return write_patching_outputs(r.out, patching, c.n_layers, c.n_heads, r.tokenizer.labels(o.corrupted), r.report);
}

}  // namespace

std::string attribution_target(const ModelAnalysisOptions& o, const attn_viz::ModelTokenizer& tokenizer) {
    const int target_id = static_cast<int>(o.target);
    return o.target >= 0 ? attn_viz::token_words(target_id, tokenizer.labels({target_id})[0]) : "next token";
}

void add_corpus_attribution(attn_viz::CorpusAttribution& corpus, const ModelAnalysisOptions& o,
                            attn_viz::WholeModel& model, attn_viz::OnednnBackend& backend,
                            const attn_viz::ModelRun& run) {
    const int64_t T = static_cast<int64_t>(run.tokens.size());
    corpus.add(attn_viz::attribute_logits(model, backend, run, attribution_targets(o, run)), o.target >= 0 ? T : T - 1);
}

void add_model_analysis_options(CLI::App* cmd, ModelAnalysisOptions& o) {
    cmd->add_option(
           "--ablate", o.ablate,
           "True ablation: rerun the model from each listed head's layer on with the head removed and report the "
           "change of next-token loss and the KL divergence (ablation.csv, ablation_*.png); an encoder (BERT), with "
           "no next-token logits, reports the change of its final hidden states (cosine distance, relative L2) and, "
           "with a masked-LM head, of its loss: all, "
           "or heads as L1H3,L2H0-7 (any case) or 1:3,2:0-7; an encoder-decoder's heads by stack, "
           "encoder/L0H1,decoder/all,cross/1:0 (each stack's files in its folder; the loss is the teacher-forced "
           "target's); over a corpus (--inputs), each measure's mean and std over the sequences")
        ->check(refuse_empty("names no head"));
    cmd->add_option("--ablate-mode", o.ablate_mode,
                    "How --ablate removes a head: zero its output, or replace it by its mean over the tokens")
        ->capture_default_str()
        ->check(CLI::IsMember({"zero", "mean"}));
    cmd->add_flag(
        "--logit-attribution", o.logit_attribution,
        "Direct logit attribution: each head's (and each embedding, feed-forward and bias's) direct contribution to "
        "the "
        "logit of the next token at every position, through the final norm with its scale frozen "
        "(logit_attribution.csv, "
        "logit_attribution_*.png; decoders only); over a corpus (--inputs) each component's mean and std over every "
        "attributed position, merged across --shard partials");
    cmd->add_option("--target", o.target_token,
                    "With --logit-attribution: attribute this token's logit at every position instead of each "
                    "position's next token: its id or its text in double quotes, as attn-viz tokenize prints them "
                    "(--target 300 or --target '\" ball\"')")
        ->check(refuse_empty("names no token"))
        ->needs("--logit-attribution");
    auto* patch_from =
        cmd->add_option(
               "--patch-from", o.patch_from,
               "Activation patching: run this corrupted text (as many tokens as the clean input) too and, for every "
               "head, replace its clean output by its corrupted one and rerun from its layer on (patching.csv, "
               "patching_*.png; decoders only; one text, not --inputs)")
            ->check(refuse_empty("is an empty text"));
    auto* patch_tokens = cmd->add_option("--patch-from-tokens", o.patch_from_tokens,
                                         "The corrupted input of activation patching as token ids");
    patch_from->excludes(patch_tokens);
    cmd->add_option(
           "--patch-from-inputs", o.patch_from_inputs,
           "Activation patching over a corpus (with --inputs): the corrupted partner of each sequence, a corpus of the "
           "same "
           "form and size read line for line (each partner as many tokens as its clean sequence); every head's mean "
           "and std "
           "change of the metric and KL over the pairs (patching.csv, patching_*.png), merged across --shard partials")
        ->check(CLI::ExistingPath)
        ->excludes(patch_from)
        ->excludes(patch_tokens);
    cmd->add_option("--patch-metric", o.patch_metric,
                    "What patching measures: loss (the clean text's next-token loss) or logit-diff:A,B (logit of token "
                    "A minus that of B at the last position; each an id or a text in double quotes, "
                    "logit-diff:'\" ball\",\" dog\"')")
        ->capture_default_str();
    cmd->add_flag(
        "--composition", o.composition,
        "Composition scores from the weights: Q-, K- and V-composition of every head with every head of a later layer "
        "(Elhage et al. 2021; composition.csv, composition_q/k/v.png); from the weights alone, so with --stream-layers "
        "and --inputs too");
    cmd->add_flag("--rollout", o.rollout,
                  "Attention rollout across layers (rollout.npy [L, T, T], rollout/layer_NN.png)");
    cmd->add_flag("--flow", o.flow,
                  "Attention flow across layers, one max-flow problem per pair (flow.npy, flow/layer_NN.png)");
    o.flow_max_tokens = 64;
    cmd->add_option("--flow-max-tokens", o.flow_max_tokens,
                    "Largest number of tokens --flow accepts (its cost grows about as T^4)")
        ->capture_default_str()
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
}

void resolve_analysis_inputs(ModelAnalysisOptions& o, const attn_viz::ModelTokenizer& tokenizer,
                             const attn_viz::ModelDescription& model, bool truncate) {
    const int64_t vocab_size = model.vocab_size;
    if (!o.target_token.empty())
        o.target = parse_option("--target",
                                [&] { return attn_viz::token_reference_id(o.target_token, &tokenizer, vocab_size); });
    if (asks_for_patching(o) || !o.patch_from_inputs.empty())
        o.metric = parse_option("--patch-metric",
                                [&] { return attn_viz::parse_patch_metric(o.patch_metric, vocab_size, &tokenizer); });
    if (asks_for_patching(o)) o.corrupted = corrupted_ids(o, tokenizer, model, truncate);
}

bool reads_logits(const ModelAnalysisOptions& o) {
    return !o.ablate.empty() || o.logit_attribution || asks_for_patching(o);
}

void check_corpus_analyses(const ModelAnalysisOptions& o, bool corpus_mode) {
    if (corpus_mode && asks_for_patching(o))
        throw CLI::ValidationError("--inputs",
                                   fmt::format("{} gives one corrupted input; over a corpus, give each sequence its "
                                               "partner with --patch-from-inputs C2.jsonl",
                                               o.patch_from ? "--patch-from" : "--patch-from-tokens"));
    if (!corpus_mode && !o.patch_from_inputs.empty())
        throw CLI::ValidationError("--patch-from-inputs",
                                   "pairs a corrupted corpus with --inputs; for one text use --patch-from");
}

void check_model_analysis_options(const ModelAnalysisOptions& o, const attn_viz::WholeModel& model,
                                  const std::vector<int>& ids) {
    const int64_t tokens = static_cast<int64_t>(ids.size());
    const attn_viz::ModelDescription& c = model.description();
    if (!o.ablate.empty()) {
        parse_option("--ablate", [&] { return attn_viz::parse_ablated_heads(o.ablate, c.n_layers, c.n_heads); });
    }
    if (o.logit_attribution) {
        check_model_has_logits(model, "--logit-attribution");
        if (const std::string obstacle = attn_viz::logit_attribution_obstacle(model.weights()); !obstacle.empty())
            throw attn_viz::Error(
                attn_viz::ErrorKind::usage,
                fmt::format("--logit-attribution: this model's logits do not split into per-head terms: {}", obstacle));
    }
    if (o.composition)
        if (const std::string obstacle = attn_viz::composition_obstacle(model.weights(), model.attention_weights());
            !obstacle.empty())
            throw attn_viz::Error(
                attn_viz::ErrorKind::usage,
                fmt::format("--composition: composition scores do not describe this model's heads: {}", obstacle));
    if (asks_for_patching(o)) {
        const char* option = o.patch_from ? "--patch-from" : "--patch-from-tokens";
        check_model_has_logits(model, option);
        const size_t corrupted = o.corrupted.size();
        if (corrupted != ids.size())
            throw attn_viz::Error(attn_viz::ErrorKind::usage,
                                  fmt::format("{}: the corrupted input has {} tokens, the clean input {}; patching "
                                              "needs the same number of tokens",
                                              option, corrupted, ids.size()));
    } else if (!o.patch_from_inputs.empty()) {
        check_model_has_logits(model, "--patch-from-inputs");
    } else if (o.patch_metric != "loss") {  // a metric with nothing to measure
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              "--patch-metric needs --patch-from, --patch-from-tokens or --patch-from-inputs");
    }
    if (o.flow && tokens > o.flow_max_tokens)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("--flow: {} tokens exceed --flow-max-tokens {} (flow solves T^2 max-flow "
                                          "problems per layer; raise the cap to wait for it)",
                                          tokens, o.flow_max_tokens));
}

nlohmann::json write_weight_analyses(const ModelAnalysisOptions& o, const ModelAnalysisRun& r) {
    using namespace attn_viz;
    if (!o.composition) return nlohmann::json::object();
    Timings::Scope t(r.timings, "composition");
    const NormFolding folding = attention_norm_folding(r.model.weights());
    return write_composition_outputs(r.out, composition_scores(r.model.attention_weights(), folding, r.backend),
                                     norm_folding_description(folding), r.report);
}

nlohmann::json write_model_analyses(const ModelAnalysisOptions& o, const ModelAnalysisRun& r,
                                    const attn_viz::ModelRun& run) {
    using namespace attn_viz;
    nlohmann::json stats = nlohmann::json::object();
    const ModelDescription& c = r.model.description();
    if (!o.ablate.empty()) {
        Timings::Scope t(r.timings, "ablation");
        Progress progress(r.show_progress, "ablated head");
        const std::vector<AblatedHead> heads = parse_ablated_heads(o.ablate, c.n_layers, c.n_heads);
        const AblationMode mode = parse_ablation_mode(o.ablate_mode);
        const auto on_head = [&](int64_t done, int64_t total) { progress.update(done, total); };
        if (r.model.has_logits())
            stats.update(write_ablation_outputs(r.out, ablate_heads(r.model, r.backend, run, heads, mode, on_head),
                                                c.n_layers, c.n_heads, r.report));
        else  // an encoder: the change of its final hidden states
            stats.update(write_encoder_ablation_outputs(
                r.out, ablate_encoder_heads(r.model, r.backend, run, heads, mode, on_head), c.n_layers, c.n_heads,
                r.report));
        progress.finish();
    }
    if (o.logit_attribution) {
        Timings::Scope t(r.timings, "logit attribution");
        stats.update(write_logit_attribution(o, r, run));
    }
    if (asks_for_patching(o)) {
        Timings::Scope t(r.timings, "patching");
        stats.update(write_patching(o, r, run));
    }
    stats.update(write_weight_analyses(o, r));
    const std::vector<std::string> tokens = r.tokenizer.labels(run.tokens);
    std::vector<const LayerResult*> layers;
    for (const LayerResult& layer : run.layers) layers.push_back(&layer);
    if (o.rollout) {
        Timings::Scope t(r.timings, "rollout");
        stats.update(write_rollout_outputs(r.out, layers, tokens, r.report));
    }
    if (o.flow) {
        Timings::Scope t(r.timings, "flow");
        Progress progress(r.show_progress, "flow row");
        stats.update(write_flow_outputs(r.out, layers, tokens, r.report,
                                        [&](int64_t done, int64_t total) { progress.update(done, total); }));
    }
    return stats;
}

}  // namespace attn_viz_cli
