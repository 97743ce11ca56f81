#include "model_analyses.hpp"

#include <fmt/format.h>

#include "error.hpp"
#include "option_checks.hpp"
#include "option_parsing.hpp"
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

}  // namespace

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
    auto* qk =
        cmd->add_option("--qk-attribution", o.qk_attribution,
                        "QK attribution, why a head attends where it does: each listed head's pre-softmax score from "
                        "the query position to the key position split into the residual stream's components on the "
                        "query side times those on the key side (embeddings, each earlier head, feed-forward and bias, "
                        "the norms' scales frozen, RoPE per component; the terms sum to the score): "
                        "qk_attribution.csv (every pair ranked), qk_attribution_LxHy.png (query side x key side), "
                        "stats.json qk_attribution; heads as L5H1,L4H0-3 (decoders with pre-norm blocks; one text)")
            ->check(refuse_empty("names no head"));
    cmd->add_option("--query-position", o.query_position,
                    "With --qk-attribution: the query token's position (0-based; default the last token)")
        ->check(CLI::NonNegativeNumber)
        ->needs(qk);
    cmd->add_option("--key-position", o.key_position,
                    "With --qk-attribution: the key token's position (0-based, at most the query's for a causal "
                    "model; default the key the head attends to most from the query)")
        ->check(CLI::NonNegativeNumber)
        ->needs(qk);
}

std::vector<attn_viz::AnalysisKind> asked_analyses(const ModelAnalysisOptions& o) {
    using enum attn_viz::AnalysisKind;
    std::vector<attn_viz::AnalysisKind> kinds;
    for (const attn_viz::AnalysisTraits& row : attn_viz::analysis_catalog()) {
        const bool asked = row.kind == ablation            ? !o.ablate.empty()
                           : row.kind == logit_attribution ? o.logit_attribution
                           : row.kind == patching          ? asks_for_patching(o) || !o.patch_from_inputs.empty()
                           : row.kind == composition       ? o.composition
                           : row.kind == rollout           ? o.rollout
                           : row.kind == flow              ? o.flow
                           : row.kind == qk_attribution    ? !o.qk_attribution.empty()
                                                           : false;
        if (asked) kinds.push_back(row.kind);
    }
    return kinds;
}

std::string analysis_flag(attn_viz::AnalysisKind kind, const ModelAnalysisOptions& o, bool corpus_mode) {
    using enum attn_viz::AnalysisKind;
    switch (kind) {
        case ablation:
            return corpus_mode ? "--ablate over a corpus (--inputs)" : "--ablate";
        case logit_attribution:
            return "--logit-attribution";
        case patching:
            return corpus_mode ? "--patch-from-inputs" : o.patch_from_tokens ? "--patch-from-tokens" : "--patch-from";
        case composition:
            return "--composition";
        case rollout:
            return "--rollout";
        case flow:
            return "--flow";
        case qk_attribution:
            return "--qk-attribution";
    }
    return "";
}

std::string analysis_flags(const std::vector<attn_viz::AnalysisKind>& kinds, const ModelAnalysisOptions& o) {
    std::string flags;
    for (attn_viz::AnalysisKind kind : kinds)
        flags += fmt::format("{}{}", flags.empty() ? "" : ", ", analysis_flag(kind, o, false));
    return flags;
}

std::string single_input_analysis_flags() {
    std::vector<attn_viz::AnalysisKind> kinds;
    for (const attn_viz::AnalysisTraits& row : attn_viz::analysis_catalog())
        if (!row.over_corpus) kinds.push_back(row.kind);
    return analysis_flags(kinds, {});
}

attn_viz::AnalysisSet resolve_analyses(const ModelAnalysisOptions& o, const attn_viz::ModelTokenizer& tokenizer,
                                       const attn_viz::WholeModel& model, bool truncate, attn_viz::CorpusShard shard,
                                       const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    const ModelDescription& c = model.description();
    AnalysisSet analyses;
    if (!o.ablate.empty())
        analyses.add(make_analysis(AblationOptions{
            .heads = parse_option("--ablate", [&] { return parse_ablated_heads(o.ablate, c.n_layers, c.n_heads); }),
            .mode = parse_ablation_mode(o.ablate_mode)}));
    if (o.logit_attribution) {
        LogitAttributionOptions attribution;
        if (!o.target_token.empty())
            attribution.target =
                parse_option("--target", [&] { return token_reference_id(o.target_token, &tokenizer, c.vocab_size); });
        attribution.target_description = attribution_target_description(attribution.target, tokenizer);
        analyses.add(make_analysis(attribution));
    }
    if (asks_for_patching(o) || !o.patch_from_inputs.empty()) {
        PatchingOptions patching{.corrupted_corpus = o.patch_from_inputs, .shard = shard, .limits = limits};
        patching.metric = parse_option("--patch-metric",
                                       [&] { return parse_patch_metric(o.patch_metric, c.vocab_size, &tokenizer); });
        if (asks_for_patching(o)) patching.corrupted = corrupted_ids(o, tokenizer, c, truncate);
        analyses.add(make_analysis(std::move(patching)));
    }
    if (o.composition) analyses.add(make_analysis(CompositionOptions{}));
    if (o.rollout) analyses.add(make_analysis(RolloutOptions{}));
    if (o.flow) analyses.add(make_analysis(FlowOptions{}));
    if (!o.qk_attribution.empty())
        analyses.add(make_analysis(QkAttributionOptions{
            .heads = parse_option("--qk-attribution",
                                  [&] { return parse_ablated_heads(o.qk_attribution, c.n_layers, c.n_heads); }),
            .query_position = o.query_position,
            .key_position = o.key_position}));
    return analyses;
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

void check_model_analyses(const ModelAnalysisOptions& o, const attn_viz::AnalysisSet& analyses,
                          const attn_viz::WholeModel& model, const std::vector<int>& ids, bool corpus_mode) {
    for (const auto& analysis : analyses.all()) {
        const attn_viz::AnalysisKind kind = analysis->traits().kind;
        const std::string obstacle = corpus_mode ? analysis->corpus_obstacle(model) : analysis->obstacle(model, ids);
        if (!obstacle.empty())
            throw attn_viz::Error(attn_viz::ErrorKind::usage,
                                  fmt::format("{}{}", analysis_flag(kind, o, corpus_mode), obstacle));
    }
    if (!analyses.asks(attn_viz::AnalysisKind::patching) && o.patch_metric != "loss")  // nothing to measure
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              "--patch-metric needs --patch-from, --patch-from-tokens or --patch-from-inputs");
    const int64_t tokens = static_cast<int64_t>(ids.size());
    if (o.flow && tokens > o.flow_max_tokens)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("--flow: {} tokens exceed --flow-max-tokens {} (flow solves T^2 max-flow "
                                          "problems per layer; raise the cap to wait for it)",
                                          tokens, o.flow_max_tokens));
}

void check_generate(const attn_viz::WholeModel& model, int generate) {
    if (const std::string no_logits = attn_viz::logits_obstacle(model); generate > 0 && !no_logits.empty())
        throw attn_viz::Error(attn_viz::ErrorKind::usage, "--generate" + no_logits);
}

}  // namespace attn_viz_cli
