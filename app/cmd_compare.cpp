// attn-viz compare: two checkpoints of one layer architecture on one input (or two whole models,
// compare_models.hpp, on one input or over a corpus, compare_corpus_run.hpp), head by head, with
// an exit status for CI (--fail-above) and pictures of the heads that changed most
// (--diff-pictures).
#include <cmath>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "attention.hpp"
#include "commands.hpp"
#include "compare_models.hpp"
#include "compare_report.hpp"
#include "compare_seq2seq.hpp"
#include "compare_summary.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "findings.hpp"
#include "head_compare.hpp"
#include "json_text.hpp"
#include "layer_options.hpp"
#include "layer_source.hpp"
#include "model_files.hpp"
#include "model_seq2seq.hpp"
#include "onednn_backend.hpp"
#include "option_checks.hpp"
#include "option_parsing.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "parallel_for.hpp"
#include "provenance.hpp"
#include "ranked_compare.hpp"
#include "report.hpp"
#include "stats_report.hpp"
#include "token_ids.hpp"

namespace attn_viz_cli {
namespace {

struct CompareOptions {
    std::string weights_a, weights_b, fail_metric = "js_distance";
    attn_viz::LayerSource layer;  // how to read either checkpoint (its path is set per checkpoint)
    LayerOptionValues layer_values;
    attn_viz::SequenceSource input;
    std::optional<std::string> tokens;  // layers: token labels of .npy/.safetensors embeddings; models: token ids
    std::vector<std::string> thresholds;
    double fail_above = -1;  // < 0: no check
    int threads = 0;
    int64_t diff_pictures = 0;
    OutputOptionValues output;
    ModelCompareInput model_input;  // whole models (folders, GGUF, llama2.c): the tokens both run over
    CorpusOptionValues corpus;      // whole models over a corpus (--inputs, --shard, --save-partial)
};

void declare_compare_options(CLI::App* cmd, CompareOptions& o) {
    cmd->description(
        "Compare two checkpoints of one layer (or two whole models) head by head on one input, or two whole "
        "models over a corpus (--inputs): labels, statistic changes, and how alike each head's maps are.");
    cmd->add_option(
           "weights_a", o.weights_a,
           "First layer: attn-viz/weights@1 JSON, or a .safetensors checkpoint with --layout (as run --weights); or a "
           "whole model (Hugging Face folder of a Llama-family, GPT-2, GPT-NeoX or BERT model, GGUF, llama2.c .bin; or "
           "a BART "
           "or T5 folder, compared with another over --target-text too)")
        ->required()
        ->check(CLI::ExistingPath);
    cmd->add_option("weights_b", o.weights_b, "Second layer or model, same architecture (any of those formats)")
        ->required()
        ->check(CLI::ExistingPath);
    cmd->add_option(
           "--input", o.input.path,
           "Layers: input sequence both run on: JSON, or embeddings [T, D] as .npy or .safetensors (as for run)")
        ->check(CLI::ExistingFile);
    cmd->add_option(
        "--tokens", o.tokens,
        "Layers: token labels for .npy/.safetensors embeddings (JSON list or one token per line); models: token "
        "ids both run over instead of --text");
    cmd->add_option("--input-tensor", o.input.tensor_name, "Name of the embeddings tensor in a .safetensors input")
        ->check(refuse_empty("names no tensor"));
    cmd->add_option("--text", o.model_input.text,
                    "Models: text both run over (encoded as the first model's tokenizer does: BOS first for Llama, "
                    "[CLS] ... [SEP] for BERT)")
        ->check(refuse_empty("is an empty text"));
    cmd->add_option(
           "--target-text", o.model_input.target_text,
           "Encoder-decoder models (bart, t5): the decoder input both run over, teacher forced (encoded as the first "
           "model's tokenizer does, as given: no shift by the tool)")
        ->check(refuse_empty("is an empty text"));
    cmd->add_option("--target-tokens", o.model_input.target_token_ids,
                    "Encoder-decoder models: the decoder input as token ids instead of --target-text");
    cmd->add_option(
           "--tokenizer", o.model_input.tokenizer,
           "Models: llama2.c tokenizer, or a Hugging Face tokenizer.json or folder (a GGUF model's or folder's own "
           "without it)")
        ->check(CLI::ExistingPath);
    add_layer_options(cmd, o.layer, o.layer_values);
    add_corpus_options(
        cmd, o.corpus,
        "Models: a corpus both run over instead of --text, as `model --inputs` reads it (JSONL of "
        "{\"text\": ...} or {\"tokens\": [...]}, plain-text lines, or a folder of .json): every measure is "
        "reported as its mean and std over the sequences, and --fail-above tests the mean",
        attn_viz::compare_partial_format);
    cmd->add_option("--generate", o.model_input.generate,
                    "Models: also generate N tokens greedily with each model from the input and say at which step the "
                    "continuations part")
        ->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--diff-pictures", o.diff_pictures,
                    "Draw the N heads whose maps changed most (largest JS distance) as A | B | A - B (the signed "
                    "difference on a diverging scale, red where A attends more) in DIR/diff_head_NN.png (models: "
                    "DIR/diff_layer_LL_head_NN.png) (needs --out)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
    cmd->add_option("--fail-above", o.fail_above,
                    "Exit 1 when any head's --fail-metric exceeds this (with --inputs: its mean over the corpus)")
        ->check(finite_number(NumberSign::non_negative));
    cmd->add_option("--fail-metric", o.fail_metric,
                    "js_distance (default: JS distance between the head's two maps), correlation_distance (1 - their "
                    "correlation) or a statistic name (absolute change)");
    add_threshold_option(cmd, o.thresholds);
    add_threads_option(cmd, o.threads, "oneDNN and statistics");
    add_output_options(cmd, o.output, {"Also write DIR/compare.json", false, "Print nothing but failures"});
    cmd->parse_complete_callback([&o] {
        if (o.diff_pictures > 0 && o.output.out.empty())
            throw CLI::ValidationError("--diff-pictures", "the pictures go into the output directory: give --out DIR");
        if (!o.corpus.path.empty() &&
            (!o.model_input.text.empty() || o.tokens || o.model_input.generate > 0 || o.diff_pictures > 0 ||
             !o.input.path.empty() || !o.model_input.target_text.empty() || o.model_input.target_token_ids))
            throw CLI::ValidationError(
                "--inputs",
                "a corpus compare keeps no maps and no single input: --text, --tokens, --target-text, "
                "--target-tokens, --input, --generate and --diff-pictures are for one sequence");
        if (!o.corpus.save_partial.empty() && o.output.out.empty())
            throw CLI::ValidationError("--save-partial",
                                       "the partial is written with the run's outputs: give --out DIR");
    });
}

// 1 when --fail-above is given and some head's --fail-metric exceeds it (each such head named).
int exit_status(const CompareOptions& o, const attn_viz::HeadComparison& c, const std::vector<double>& metric,
                const attn_viz::CompareSummary& summary) {
    for (int64_t n : summary.failing)
        std::fprintf(stderr, "attn-viz: %s: %s %.6g exceeds %g\n",
                     attn_viz::head_tag(c.first.head_ids[static_cast<size_t>(n)]).c_str(), o.fail_metric.c_str(),
                     metric[static_cast<size_t>(n)], o.fail_above);
    return summary.failing.empty() ? 0 : 1;
}

// compare.json: the per-head comparison with the summary first (heads also ranked there).
nlohmann::json compare_document(const attn_viz::HeadComparison& c, const attn_viz::CompareSummary& summary,
                                const std::vector<double>& metric, const std::vector<double>& top1) {
    nlohmann::json doc = attn_viz::comparison_json(c);
    doc["summary"] = attn_viz::compare_summary_json(summary, c, metric, top1);
    doc["provenance"] = run_provenance();
    return doc;
}

// Two whole models over a corpus: each measure's mean and std; --fail-above tests the means.
int compare_models_corpus(CompareOptions& o, const attn_viz::AnalysisOptions& options,
                          const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    resolve_corpus_options(o.corpus);
    const std::vector<std::string> inputs = {o.weights_a, o.weights_b, o.model_input.tokenizer, o.corpus.path};
    check_output_files({o.corpus.save_partial}, inputs, o.output.out);
    std::string note;
    const CompareCorpusAccumulator corpus = compare_models_over_corpus(
        o.weights_a, o.weights_b, o.model_input.tokenizer, o.corpus, options, limits, o.output.quiet, note);
    const CorpusCompareReport report =
        attn_viz::corpus_compare_report(corpus, options.thresholds, o.fail_metric, o.fail_above);
    if (!o.output.out.empty()) {
        OutputDir out(o.output.out, o.output.force);
        out.protect_inputs(inputs);
        attn_viz::write_corpus_compare_outputs(out, report, run_provenance(),
                                               attn_viz::compared_names(o.weights_a, o.weights_b));
        if (!o.corpus.save_partial.empty()) corpus.save_partial(out.external_file(o.corpus.save_partial));
        out.commit();
    }
    if (!o.output.quiet) std::fputs((report.text + note).c_str(), stdout);
    return exit_status(o, report.comparison.mean, report.metric, report.summary);
}

// Two encoder-decoder folders (compare_seq2seq.hpp); both must be one (Error(bad_input) naming
// the other otherwise).
int compare_encoder_decoders(const CompareOptions& o, bool seq2seq_a, bool seq2seq_b,
                             const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits) {
    if (seq2seq_a != seq2seq_b)
        attn_viz::fail_input(seq2seq_a ? o.weights_b : o.weights_a,
                             fmt::format("not an encoder-decoder folder, while {} is one: compare takes two models of "
                                         "one architecture",
                                         seq2seq_a ? o.weights_a : o.weights_b));
    if (o.diff_pictures > 0)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              "compare: --diff-pictures is not built for encoder-decoders (it names heads "
                              "LxHy, ambiguous across the encoder, decoder and cross stacks)");
    const Seq2SeqComparison m = compare_seq2seq_models(o.weights_a, o.weights_b, o.model_input, options, limits);
    return report_seq2seq_comparison(
        m, {o.fail_metric, o.fail_above, o.output, {o.weights_a, o.weights_b, o.model_input.tokenizer}});
}

int compare_models(CompareOptions& o, const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    if (!o.corpus.path.empty()) return compare_models_corpus(o, options, limits);
    o.model_input.token_ids = o.tokens;
    if (o.model_input.text.empty() == !o.model_input.token_ids)
        throw Error(ErrorKind::usage, "compare of two models needs one of --text or --tokens");
    const bool seq2seq_a = is_seq2seq_folder(o.weights_a, limits), seq2seq_b = is_seq2seq_folder(o.weights_b, limits);
    if (seq2seq_a || seq2seq_b) return compare_encoder_decoders(o, seq2seq_a, seq2seq_b, options, limits);
    refuse_target_for_decoder("", !o.model_input.target_text.empty() || o.model_input.target_token_ids);
    const attn_viz::ModelComparison m = compare_whole_models(o.weights_a, o.weights_b, o.model_input, options, limits);
    const std::vector<double> metric = comparison_metric(m.heads, o.fail_metric);
    const CompareSummary summary = summarize_comparison(m.heads, metric, o.fail_metric, m.top1, o.fail_above);
    if (!o.output.out.empty()) {
        OutputDir out(o.output.out, o.output.force);
        out.protect_inputs({o.weights_a, o.weights_b, o.model_input.tokenizer});
        nlohmann::json doc = model_comparison_json(m, metric, summary);
        doc["provenance"] = run_provenance();
        write_file_atomically(out.file("compare.json"), json_file_text(doc, 1));
        const attn_viz::ComparedNames names = attn_viz::compared_names(o.weights_a, o.weights_b);
        write_comparison_pictures(out, m.heads, m.top1, names, "");
        if (o.diff_pictures > 0) {
            std::vector<const LayerResult*> first, second;
            for (size_t l = 0; l < m.run_a.layers.size(); ++l)
                first.push_back(&m.run_a.layers[l]), second.push_back(&m.run_b.layers[l]);
            write_diff_pictures(out, m.heads, first, second, m.token_labels, names, o.diff_pictures);
        }
        out.commit();
    }
    if (!o.output.quiet) {
        std::fputs(compare_summary_text(summary, m.heads, metric, m.top1).c_str(), stdout);
        std::fputs(attn_viz::output_comparison_text(m).c_str(), stdout);
        std::fputs(ranked_comparison_table(m.heads, m.top1).c_str(), stdout);
    }
    return exit_status(o, m.heads, metric, summary);
}

// One of the two checkpoints, through the loader that picks the format by file type (every format
// `run --weights` reads; a new one joins there or here). --layout and the other checkpoint
// options apply to a .safetensors checkpoint, so a JSON layer can be compared with one.
attn_viz::LayerWeights load_compared_layer(const std::string& path, const CompareOptions& o,
                                           const attn_viz::LoadLimits& limits) {
    attn_viz::LayerSource source = o.layer;
    source.path = path;
    if (!path.ends_with(".safetensors")) source.layout.clear();
    return attn_viz::load_layer_weights(source, limits);
}

int compare(CompareOptions& o) {
    using namespace attn_viz;
    // Step 1: options, weights and input, all validated before any work. Every product runs on
    // one backend.
    AnalysisOptions options;
    options.threads = use_threads(o.threads);
    OnednnBackend backend;
    options.backend = &backend;
    options.thresholds = parse_thresholds(o.thresholds);
    // An unknown metric fails here, before any work.
    parse_option("--fail-metric", [&] { return comparison_metric(HeadComparison{}, o.fail_metric); });
    const LoadLimits limits;
    if (attn_viz::is_model_path(o.weights_a) || attn_viz::is_model_path(o.weights_b))
        return compare_models(o, options, limits);
    if (!o.corpus.path.empty())
        throw Error(ErrorKind::usage,
                    "compare: --inputs runs two whole models over a corpus; two layers compare on one --input");
    if (o.model_input.generate > 0)
        throw Error(ErrorKind::usage,
                    "compare: --generate continues a text with two whole models; two layers have no next tokens");
    if (o.input.path.empty())
        throw Error(
            ErrorKind::usage,
            "compare: no input sequence: two layers need --input X, the sequence both run on (a JSON sequence, or "
            ".npy/.safetensors embeddings with --tokens) (attn-viz compare --help lists its options)");
    o.input.tokens_path = o.tokens.value_or("");
    resolve_layer_options(o.layer, o.layer_values);
    const LayerWeights a = load_compared_layer(o.weights_a, o, limits), b = load_compared_layer(o.weights_b, o, limits);
    if (a.d_model != b.d_model || a.num_heads != b.num_heads || a.num_kv_heads != b.num_kv_heads ||
        a.causal != b.causal)
        fail_input(o.weights_b,
                   fmt::format("a different architecture from {} (d_model, heads, KV heads or causal)", o.weights_a));
    const SequenceInput input = load_sequence(o.input, a.d_model, limits);

    // Step 2: both layers on oneDNN (from this thread only), then the comparison.
    AttentionRequest request;
    request.input = &input.embeddings;
    request.key_excluded = input.key_excluded;
    AttentionLayer layer_a(backend, a), layer_b(backend, b);
    const LayerResult result_a = layer_a.run(request), result_b = layer_b.run(request);
    HeadComparison c = compare_runs({&result_a}, {&a}, {&result_b}, {&b}, token_ids_from_labels(input.tokens), options);
    for (HeadId& id : c.first.head_ids) id.layer += o.layer.layer;  // named as the checkpoint's layer (--layer N)
    const std::vector<double> metric = comparison_metric(c, o.fail_metric);
    const CompareSummary summary = summarize_comparison(c, metric, o.fail_metric, {}, o.fail_above);

    // Step 3: report, then the exit status.
    if (!o.output.out.empty()) {
        OutputDir out(o.output.out, o.output.force);
        out.protect_inputs({o.weights_a, o.weights_b, o.input.path, o.input.tokens_path});
        write_file_atomically(out.file("compare.json"), json_file_text(compare_document(c, summary, metric, {}), 1));
        if (o.diff_pictures > 0)
            write_diff_pictures(out, c, {&result_a}, {&result_b}, input.tokens,
                                attn_viz::compared_names(o.weights_a, o.weights_b), o.diff_pictures);
        out.commit();
    }
    if (!o.output.quiet) {
        std::fputs(compare_summary_text(summary, c, metric, {}).c_str(), stdout);
        std::fputs(comparison_table(c).c_str(), stdout);
    }
    return exit_status(o, c, metric, summary);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "compare", declare_compare_options, compare);
}

}  // namespace attn_viz_cli
