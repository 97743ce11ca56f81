// The encoder-decoder run of attn-viz model: load, check sizes, run (or generate, then run), write
// the three stacks' report (or run and write it layer by layer), commit, print.
#include "model_seq2seq.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "ablation_report.hpp"
#include "error.hpp"
#include "generation.hpp"
#include "layer_cost.hpp"
#include "memory_budget.hpp"
#include "option_parsing.hpp"
#include "output_dir.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "report_options.hpp"
#include "run_output.hpp"
#include "run_steps.hpp"
#include "seq2seq_ablation.hpp"
#include "seq2seq_report.hpp"
#include "seq2seq_stream.hpp"
#include "token_file.hpp"

namespace attn_viz_cli {
namespace {

using attn_viz::Error;
using attn_viz::ErrorKind;

// --generate starts the decoder from config.json's decoder_start_token_id: one outside the
// vocabulary (the model's, and the tokenizer's that labels it) is Error(bad_input) naming the file
// and the key, before anything runs.
void check_decoder_start(const std::string& folder, const attn_viz::Seq2SeqConfig& config,
                         const attn_viz::ModelTokenizer& tokenizer) {
    const int64_t start = config.decoder_start_token_id,
                  vocab = std::min<int64_t>(config.blocks.vocab_size, tokenizer.vocab_size());
    if (start < 0 || start >= vocab)
        attn_viz::fail_input(
            (std::filesystem::path(folder) / "config.json").string(),
            fmt::format("\"decoder_start_token_id\" is {}, outside the vocabulary (0..{})", start, vocab - 1));
}

// --generate: the decoder's greedy ids from its start token, printed as a continuation of it.
std::vector<int> generated_target(const ModelOptions& o, attn_viz::Seq2SeqModel& model,
                                  const attn_viz::ModelTokenizer& tokenizer, const std::vector<int>& source,
                                  RunOutput& printed) {
    const int start = model.weights().config.decoder_start_token_id;
    const std::vector<int> target = model.generate(source, o.generate, tokenizer.end_ids(), tokenizer.vocab_size());
    attn_viz::Generation g;
    g.ids.assign(target.begin() + 1, target.end());
    g.text = tokenizer.decode(g.ids);
    g.requested = o.generate;
    const bool ended =
        !g.ids.empty() && !tokenizer.end_ids().empty() &&
        std::find(tokenizer.end_ids().begin(), tokenizer.end_ids().end(), g.ids.back()) != tokenizer.end_ids().end();
    g.stop = ended ? "end_of_text" : static_cast<int64_t>(g.ids.size()) < o.generate ? "context_full" : "length";
    if (ended) g.end_token = tokenizer.labels({g.ids.back()}).front();
    const std::string prompt = fmt::format("{} -> {}", tokenizer.decode(source), tokenizer.labels({start}).front());
    printed.add_result(attn_viz::generation_lines(g, prompt));
    printed.json()["generation"] = attn_viz::generation_json(g, prompt);
    return target;
}

// --ablate's heads, each stack's by the number of its layers (Error(usage) naming --ablate).
std::vector<attn_viz::Seq2SeqHead> ablated_heads(const ModelOptions& o, const attn_viz::Seq2SeqWeights& weights) {
    return parse_option("--ablate", [&] {
        return attn_viz::parse_seq2seq_ablated_heads(o.analyses.ablate, weights.config.blocks.n_layers,
                                                     weights.config.n_decoder_layers, weights.config.blocks.n_heads);
    });
}

// --ablate: each chosen head removed in turn, the model rerun; each stack's ablation.csv and
// pictures in its folder, and {"encoder": {...}, "decoder": ..., "cross": ...} (the stacks with
// ablated heads, each as write_ablation_outputs' "ablation") for stats.json's "ablation".
nlohmann::json seq2seq_ablation(const ModelOptions& o, attn_viz::Seq2SeqModel& model, const attn_viz::Seq2SeqRun& clean,
                                attn_viz::OutputDir& out, attn_viz::Timings& timings) {
    using namespace attn_viz;
    Timings::Scope t(timings, "ablation");
    Progress progress(progress_wanted(o.output.quiet), "ablated head");
    const std::array<AblationReport, 3> reports = ablate_seq2seq_heads(
        model, clean, ablated_heads(o, model.weights()), parse_ablation_mode(o.analyses.ablate_mode),
        [&](int64_t done, int64_t total) { progress.update(done, total); });
    progress.finish();
    nlohmann::json stacks = nlohmann::json::object();
    for (Seq2SeqStack stack : seq2seq_stacks) {
        const AblationReport& report = reports[static_cast<size_t>(stack)];
        if (report.heads.empty()) continue;
        const std::string name = seq2seq_stack_name(stack);
        const int64_t layers = stack == Seq2SeqStack::encoder ? model.weights().config.blocks.n_layers
                                                              : model.weights().config.n_decoder_layers;
        stacks[name] = write_ablation_outputs(out, report, layers, model.weights().config.blocks.n_heads, o.report,
                                              fmt::format("{}/", name))["ablation"];
    }
    return stacks;
}

// The run of `report.run`'s ids with every attention layer's report written as soon as the layer
// is done (Seq2SeqStream into `out`); `progress`: told the layers done.
attn_viz::Seq2SeqAnalysis stream_seq2seq_report(attn_viz::OutputDir& out, attn_viz::Seq2SeqModel& model,
                                                const attn_viz::Seq2SeqReportInput& report,
                                                const attn_viz::ReportOptions& options, attn_viz::StepCallback progress,
                                                attn_viz::Timings& timings, attn_viz::PictureNotes& notes) {
    using namespace attn_viz;
    Seq2SeqStream stream(out, report, options, timings);
    const Seq2SeqConfig& c = model.weights().config;
    StreamedForward forward(timings, std::move(progress), c.blocks.n_layers + 2 * c.n_decoder_layers);
    model.run_layers(report.run->source, report.run->target, true,
                     [&](Seq2SeqStack stack, int64_t layer, LayerResult& result, const LayerWeights& weights) {
                         forward.report([&] { stream.add_layer(stack, layer, result, weights); });
                     });
    forward.finish();
    return stream.finish(notes);
}

}  // namespace

attn_viz::RunBytes seq2seq_run_bytes(const attn_viz::ModelConfig& c, int64_t decoder_layers, int64_t S, int64_t T) {
    using attn_viz::saturating_product;
    auto layer = [&](int64_t queries, int64_t keys) {
        return attn_viz::estimate_layer_run_bytes(c.d_model, c.n_heads, c.n_kv_heads, c.head_dim, queries, keys);
    };
    const uint64_t encoder = saturating_product(layer(S, S), static_cast<uint64_t>(c.n_layers));
    const uint64_t decoder = saturating_product(layer(T, T) + layer(T, S), static_cast<uint64_t>(decoder_layers));
    const uint64_t whole = encoder + decoder < encoder ? UINT64_MAX : encoder + decoder;  // saturated
    return {whole, std::max({layer(S, S), layer(T, T), layer(T, S)}),
            fmt::format("running one attention layer over {} source and {} target tokens", S, T)};
}

void check_seq2seq_run_memory(const attn_viz::ModelConfig& c, int64_t decoder_layers, int64_t S, int64_t T,
                              const attn_viz::LoadLimits& limits) {
    attn_viz::check_memory(seq2seq_run_bytes(c, decoder_layers, S, T).whole_run, limits.memory_budget,
                           fmt::format("running an encoder-decoder over {} source and {} target tokens", S, T));
}

std::vector<int> seq2seq_ids(const std::string& text, const std::optional<std::string>& ids,
                             const attn_viz::ModelTokenizer& tokenizer, int64_t vocab_size, int64_t max_tokens,
                             const char* text_option, const char* ids_option) {
    const char* option = ids ? ids_option : text_option;
    const std::vector<int> result = ids ? attn_viz::parse_token_ids(*ids, option)
                                        : attn_viz::encode_within_context(tokenizer, text, max_tokens, option);
    attn_viz::check_model_tokens(result, vocab_size, max_tokens, option);
    return result;
}

void refuse_for_encoder_decoder(const std::string& model_type, const std::vector<RefusedOption>& options) {
    for (const RefusedOption& o : options)
        if (o.given)
            throw Error(ErrorKind::usage, fmt::format("{} does not apply to an encoder-decoder model ({}): {}",
                                                      o.option, model_type, o.why));
}

void refuse_target_for_decoder(const std::string& model_type, bool target_given) {
    if (target_given)
        throw Error(ErrorKind::usage,
                    fmt::format("--target-text and --target-tokens are the decoder input of an encoder-decoder model "
                                "(bart, t5); {}{} has no decoder input",
                                model_type.empty() ? "this model" : "model_type ", model_type));
}

int run_seq2seq_model(const ModelOptions& o, attn_viz::ModelSession& session, const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    if (o.generate <= 0 && o.target_text.empty() && !o.target_token_ids)
        throw Error(ErrorKind::usage,
                    fmt::format("an encoder-decoder model ({}) needs the decoder's input: --target-text, "
                                "--target-tokens or --generate N",
                                session.model_type()));
    const std::unique_ptr<OutputDir> out_dir =
        open_run_output(o, {o.checkpoint, o.tokenizer}, seq2seq_dump_paths(o.report.dump_attention));
    OutputDir& out = *out_dir;
    Timings timings;

    // Step 1: the model, its tokenizer, the source and target ids, validated before anything is written.
    std::vector<int> source, target;
    Seq2SeqModel* model = nullptr;
    const ModelTokenizer* tokenizer = nullptr;
    {
        Timings::Scope t(timings, "load");
        session.load(o.tokenizer);
        model = &session.seq2seq(), tokenizer = &session.tokenizer();
        const ModelConfig& c = model->weights().config.blocks;
        source = seq2seq_ids(o.text, o.token_ids, *tokenizer, c.vocab_size, c.max_tokens, "--text", "--tokens");
        if (o.generate > 0)
            check_decoder_start(session.path(), model->weights().config, *tokenizer);
        else
            target = seq2seq_ids(o.target_text, o.target_token_ids, *tokenizer, c.vocab_size, c.max_tokens,
                                 "--target-text", "--target-tokens");
        if (!o.analyses.ablate.empty()) ablated_heads(o, model->weights());
    }
    OnednnBackend& backend = session.backend();
    const ModelConfig& c = model->weights().config.blocks;
    const int64_t S = static_cast<int64_t>(source.size()),
                  T = o.generate > 0 ? c.max_tokens : static_cast<int64_t>(target.size());
    const int64_t decoder_layers = model->weights().config.n_decoder_layers;
    const bool streamed = streams_layers(o.stream_layers, whole_run_options(o.report, o.generate, o.analyses),
                                         seq2seq_run_bytes(c, decoder_layers, S, T), limits);
    if (!streamed) check_seq2seq_run_memory(c, decoder_layers, S, T, limits);

    // Step 2: the forward pass (after the greedy target, with --generate), then the three stacks'
    // report; or both together, layer by layer.
    RunOutput printed("model", o.json, o.output.quiet);
    if (o.generate > 0) {
        Timings::Scope t(timings, "generate");
        target = generated_target(o, *model, *tokenizer, source, printed);
    }
    Seq2SeqRun run;
    run.source = source, run.target = target;
    const nlohmann::json provenance = run_provenance();
    Seq2SeqReportInput report;
    report.backend = &backend;
    report.run = &run;
    report.weights = &model->weights();
    report.source_tokens = tokenizer->labels(source);
    report.target_tokens = tokenizer->labels(target);
    report.extra_stats = {{"provenance", provenance}, {"model_type", c.architecture}};
    report.model_description = seq2seq_model_description(o.checkpoint, model->weights().config);
    report.source_text = o.text.empty() ? tokenizer->decode(source) : o.text;  // --tokens: the ids decoded
    report.target_text =
        o.target_text.empty() ? tokenizer->decode(target) : o.target_text;  // --target-tokens, --generate
    PictureNotes notes;
    Seq2SeqAnalysis analysis;
    if (streamed) {
        analysis = stream_seq2seq_report(out, *model, report, o.report,
                                         attn_viz::progress_callback(progress_lines(o.output.quiet), "attention layer"),
                                         timings, notes);
    } else {
        {
            Timings::Scope t(timings, "forward");
            run = model->run(source, target);
        }
        if (!o.analyses.ablate.empty()) report.extra_stats["ablation"] = seq2seq_ablation(o, *model, run, out, timings);
        analysis = write_seq2seq_report(out, report, o.report, timings, &notes);
    }
    printed.add_text(fmt::format("{} source tokens: {}\n{} target tokens: {}\n", source.size(),
                                 tokenizer->decode(source), target.size(), tokenizer->decode(target)));
    for (const auto& [name, stack] : analysis.stacks)
        printed.add_analysis(stack, fmt::format("{}/", name), fmt::format("\n{}:\n", name));
    if (report.extra_stats.contains("ablation")) {
        const nlohmann::json& ablation = report.extra_stats["ablation"];
        for (Seq2SeqStack stack : seq2seq_stacks)
            if (ablation.contains(seq2seq_stack_name(stack)))
                for (const auto& finding : ablation[seq2seq_stack_name(stack)]["findings"])
                    printed.add_text(fmt::format("{}: {}\n", seq2seq_stack_name(stack), finding.get<std::string>()));
        printed.json()["ablation"] = ablation;
    }
    printed.add_text(picture_hint(notes, o.report));
    printed.json()["source_tokens"] = report.source_tokens;
    printed.json()["target_tokens"] = report.target_tokens;

    // Step 3: everything moves into place together; then what the user asked to see.
    finish_run(o, out, timings, printed, provenance, peak_memory_line());
    return 0;
}

}  // namespace attn_viz_cli
