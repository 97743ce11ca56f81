// attn-viz run: one attention layer on one sequence (or a batch of them, or a corpus), end to end:
// load every input, check the run fits the memory budget, run the layer and write the report of
// each sequence, commit the outputs, print the tables.
#include <cstdio>

#include <fmt/format.h>

#include "attention.hpp"
#include "commands.hpp"
#include "corpus_options.hpp"
#include "corpus_stats.hpp"
#include "error.hpp"
#include "input_limits.hpp"
#include "layer_corpus_run.hpp"
#include "layer_cost.hpp"
#include "layer_options.hpp"
#include "onednn_backend.hpp"
#include "option_checks.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "poisoned_heads.hpp"
#include "progress.hpp"
#include "provenance.hpp"
#include "report.hpp"
#include "report_options.hpp"
#include "run_output.hpp"
#include "run_steps.hpp"
#include "sequence_stream.hpp"
#include "timings.hpp"
#include "token_ids.hpp"
#include "weights_fingerprint.hpp"

namespace attn_viz_cli {
namespace {

struct RunOptions : ReportRunOptions {
    attn_viz::LayerSource layer;
    LayerOptionValues layer_values;
    std::vector<std::string> inputs;
    std::string tokens, input_tensor, context;
};

void declare_run_options(CLI::App* cmd, RunOptions& o) {
    cmd->description(
        "Run one multi-head attention layer on a sequence and write a heatmap per head, statistics (stats.json, "
        "CSV) and optional dumps.");
    cmd->add_option("--weights", o.layer.path,
                    "Layer weights: attn-viz/weights@1 JSON (tensors inline or {\"npy\": file}), or a .safetensors "
                    "checkpoint with --layout")
        ->required()
        ->check(CLI::ExistingFile);
    cmd->add_option(
           "--input", o.inputs,
           "Input sequence: JSON {\"tokens\", \"embeddings\", \"attention_mask\"}, or embeddings [T, D] as .npy or "
           ".safetensors. Repeat for a batch: each sequence gets its own folder seq_NN/")
        ->check(CLI::ExistingFile);
    add_corpus_options(cmd, o.corpus,
                       "Corpus mode: a JSONL file (one input object per line) or a folder of input JSON files; "
                       "every statistic is aggregated (mean and std per head) with memory independent of their number");
    cmd->add_option("--tokens", o.tokens,
                    "Token labels for .npy/.safetensors embeddings: JSON list or one token per line")
        ->check(CLI::ExistingFile);
    cmd->add_option("--input-tensor", o.input_tensor, "Name of the embeddings tensor in a .safetensors input")
        ->check(refuse_empty("names no tensor"));
    cmd->add_option("--context", o.context,
                    "Cross-attention: keys and values come from this sequence (same formats as "
                    "--input); maps are T x S. Its attention_mask masks keys")
        ->check(CLI::ExistingFile);
    add_output_options(
        cmd, o.output,
        {"Output directory (created; an earlier run's results there are kept unless --force); optional with "
         "--json, which without it prints the summary and writes nothing",
         false});
    cmd->add_option("--dump-attention", o.report.dump_attention,
                    "Also write the attention weights as float32 .npy [H, T, S] (a batch: one file per sequence, "
                    "NAME.seq_NN.npy)")
        ->check(refuse_empty("names no file"));
    cmd->add_option("--dump-output", o.report.dump_output, "Also write the layer output as float32 .npy [T, D]")
        ->check(refuse_empty("names no file"));
    add_layer_options(cmd, o.layer, o.layer_values);
    add_report_options(cmd, o.report, o.report_values);
    add_scripting_options(cmd, o.json, o.stats_only);
    add_input_limit_options(cmd, o.limit_values);
    cmd->add_flag("--timings", o.timings,
                  "Print the time of each stage (load, attention, statistics, pictures, commit) on stderr");
    cmd->parse_complete_callback([&o] {
        if (o.inputs.empty() && o.corpus.path.empty())
            throw CLI::ValidationError(
                "no input sequence: give --input X (a JSON sequence, or .npy/.safetensors embeddings "
                "with --tokens), repeated for a batch, or --inputs CORPUS (JSONL or a folder)");
        if (!o.inputs.empty() && !o.corpus.path.empty())
            throw CLI::ValidationError("--input and --inputs",
                                       "give one or more --input, or one --inputs corpus, not both");
        if (!o.corpus.path.empty()) check_corpus_mode(o.report, o.report_values, !o.context.empty(), "--context");
        check_out_or_json(o.output, o.json, written_files(o.report, o.report_values, o.corpus));
    });
}

// Everything a run reads (but a corpus, read one sequence at a time), validated before anything
// is written.
struct RunInputs {
    attn_viz::LayerWeights weights;
    std::vector<attn_viz::SequenceInput> sequences;
    attn_viz::SequenceInput context;  // keys and values of cross-attention; empty without --context
};

// With --allow-nonfinite, names the heads NaN/Inf values reach (`where`: "" or "sequence 3: ";
// layer: run --layer N).
void warn_poisoned_heads(const attn_viz::LayerResult& result, int64_t layer, const std::string& where) {
    const std::vector<std::string> poisoned = attn_viz::poisoned_heads(result, layer);
    if (poisoned.empty()) return;
    const std::string names = fmt::format("{}", fmt::join(poisoned, ", "));
    std::fprintf(stderr, "attn-viz: warning: %snon-finite values reach %s\n", where.c_str(), names.c_str());
}

// The layer on oneDNN, with what every sequence's report shares.
struct LayerRunner {
    attn_viz::OnednnBackend& backend;
    const attn_viz::LayerWeights& weights;
    attn_viz::AttentionLayer& layer;
    const attn_viz::WeightSimilarities& weight_similarity;
    attn_viz::Timings& timings;
    int64_t layer_number = 0;  // --layer: what messages call the layer
    double flops = 0;          // of every layer run so far, for the GFLOP/s of --timings

    // The layer on one request, timed, with the poisoned-heads warning.
    attn_viz::LayerResult run(const attn_viz::AttentionRequest& request, const std::string& where) {
        attn_viz::LayerResult result;
        {
            attn_viz::Timings::Scope t(timings, "attention");
            result = layer.run(request);
        }
        count(result, where);
        return result;
    }

    // After a run: the poisoned-heads warning (`where`: "" or "sequence 3: "), its FLOPs counted.
    void count(const attn_viz::LayerResult& result, const std::string& where) {
        warn_poisoned_heads(result, layer_number, where);
        const attn_viz::Visibility& v = result.visibility;
        flops += attn_viz::attention_flops(v.queries, v.keys, weights.d_model, weights.num_heads, weights.num_kv_heads,
                                           weights.d_head, true, v.causal);
    }
};

// "seq_03": the name of sequence `index` of a batch.
std::string sequence_name(size_t index) { return fmt::format("seq_{:02}", index); }

// "a.npy" -> "a.seq_03.npy": one dump per sequence of a batch.
std::string per_sequence(const std::string& path, size_t index) {
    if (path.empty()) return path;
    const std::string suffix = fmt::format(".{}", sequence_name(index));
    const size_t dot = path.rfind('.');
    return dot == std::string::npos || path.find('/', dot) != std::string::npos
               ? fmt::format("{}{}", path, suffix)
               : fmt::format("{}{}{}", path.substr(0, dot), suffix, path.substr(dot));
}

// Every file the run reads: no output may replace one.
std::vector<std::string> input_paths(const RunOptions& o) {
    std::vector<std::string> paths = o.inputs;
    paths.insert(paths.end(), {o.layer.path, o.context, o.tokens, o.corpus.path});
    return paths;
}

RunInputs load_inputs(const RunOptions& o, const attn_viz::LoadLimits& limits, attn_viz::Timings& timings) {
    attn_viz::Timings::Scope t(timings, "load");
    RunInputs in;
    in.weights = attn_viz::load_layer_weights(o.layer, limits);
    for (const std::string& path : o.inputs)
        in.sequences.push_back(attn_viz::load_sequence({path, o.tokens, o.input_tensor}, in.weights.d_model, limits));
    if (!o.context.empty()) in.context = attn_viz::load_sequence({o.context, "", ""}, in.weights.d_model, limits);
    return in;
}

void check_run_memory(const RunOptions& o, const RunInputs& in, const attn_viz::LoadLimits& limits) {
    for (const attn_viz::SequenceInput& sequence : in.sequences) {
        const int64_t T = sequence.embeddings.dim(0);
        attn_viz::check_layer_run_memory(in.weights, T, o.context.empty() ? T : in.context.embeddings.dim(0),
                                         limits.memory_budget);
    }
}

// Each sequence through the layer, then its pictures, statistics and dumps (staged), a batch's
// in its own folder seq_NN/, each added to what is printed.
void run_sequences(const RunOptions& o, const RunInputs& in, LayerRunner& runner, attn_viz::OutputDir& out,
                   RunOutput& printed, const nlohmann::json& provenance) {
    attn_viz::PictureNotes notes;
    using namespace attn_viz;
    const bool batch = in.sequences.size() > 1;
    for (size_t n = 0; n < in.sequences.size(); ++n) {
        const SequenceInput& queries = in.sequences[n];
        const SequenceInput& keys = o.context.empty() ? queries : in.context;
        AttentionRequest request;
        request.input = &queries.embeddings;
        request.context = o.context.empty() ? nullptr : &in.context.embeddings;
        request.key_excluded = keys.key_excluded;
        request.with_value_norms = o.report.map == PictureMap::norm;
        LayerResult result = runner.run(request, batch ? fmt::format("sequence {}: ", n) : "");
        ReportOptions report = o.report;
        report.dump_attention = batch ? per_sequence(o.report.dump_attention, n) : o.report.dump_attention;
        report.dump_output = batch ? per_sequence(o.report.dump_output, n) : o.report.dump_output;
        ReportInput report_input{&runner.backend, {&result}, {&in.weights}, queries.tokens, keys.tokens, false, ""};
        if (o.context.empty()) report_input.token_ids = token_ids_from_labels(queries.tokens);
        report_input.weight_similarity = &runner.weight_similarity;
        report_input.layer_numbers = {o.layer.layer};
        if (batch) report_input.folder = fmt::format("{}/", sequence_name(n));
        report_input.extra_stats["provenance"] = provenance;
        report_input.model_description =
            fmt::format("{} (layer {}, {} heads)", o.layer.path, o.layer.layer, in.weights.num_heads);
        printed.add_analysis(write_report(out, report_input, report, runner.timings, &notes), report_input.folder,
                             batch ? fmt::format("sequence {} ({})\n", n, report_input.folder) : "");
        if (!batch) printed.json()["tokens"] = queries.tokens;
        runner.layer.recycle(std::move(result));
    }
    printed.add_text(picture_hint(notes, o.report));
}

// Corpus mode: every sequence through the layer and the analysis, one at a time, into running
// moments; memory does not depend on the number of sequences. Adds the result to what is printed
// and returns the run's provenance (known once the last sequence is read).
nlohmann::json run_corpus(const RunOptions& o, const attn_viz::LoadLimits& limits, LayerRunner& runner,
                          attn_viz::OutputDir& out, RunOutput& printed) {
    using namespace attn_viz;
    CorpusRun run(o, limits, layer_fingerprint(runner.weights));
    const AnalysisOptions options = analysis_options(o.report, runner.backend, &runner.weight_similarity);
    LayerCorpusHooks hooks;
    hooks.on_run = [&runner](const std::string& where, const LayerResult& result) {
        runner.count(result, fmt::format("{}: ", where));
    };
    hooks.on_sequence = [&run](int64_t sequences) { run.sequence_done(sequences); };
    add_layer_corpus(run.documents, runner.layer, options, limits, run.corpus, hooks, runner.timings);
    return run.finish(out, printed);
}

int run(RunOptions& o) {
    using namespace attn_viz;
    resolve_layer_options(o.layer, o.layer_values);
    const LoadLimits limits = prepare_run(o, o.layer.layer);
    const std::unique_ptr<OutputDir> out_dir =
        open_run_output(o, input_paths(o), {o.report.dump_attention, o.report.dump_output, o.corpus.save_partial});
    OutputDir& out = *out_dir;

    // Step 1: read and validate every input, and the run's size, before anything is written.
    Timings timings;
    const RunInputs in = load_inputs(o, limits, timings);
    check_run_memory(o, in, limits);

    // Step 2: each sequence through the layer on oneDNN (primitives are reused across sequences
    // of one length; the first run of a shape includes JIT code generation), then its report.
    OnednnBackend backend;
    AttentionLayer layer(backend, in.weights);
    WeightSimilarities weight_similarity;
    {
        Timings::Scope t(timings, "weight similarity");
        weight_similarity = weight_similarities({&in.weights}, false, backend);
    }
    LayerRunner runner{backend, in.weights, layer, weight_similarity, timings, o.layer.layer};
    RunOutput printed("run", o.json, o.output.quiet);
    nlohmann::json provenance;
    if (o.corpus.path.empty()) {
        provenance = run_provenance();
        run_sequences(o, in, runner, out, printed, provenance);
    } else {
        provenance = run_corpus(o, limits, runner, out, printed);
    }

    // Step 3: everything moves into place together; then what the user asked to see.
    finish_run(o, out, timings, printed, provenance, attention_rate(timings, runner.flops));
    return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "run", declare_run_options, run);
}

}  // namespace attn_viz_cli
