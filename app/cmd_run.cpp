// attn-viz run: one attention layer on one sequence (or a batch of them), end to end.
#include <cstdio>
#include <memory>

#include "onednn_backend.hpp"
#include "token_ids.hpp"
#include "layer_cost.hpp"
#include "attention.hpp"
#include "commands.hpp"
#include "corpus_fingerprint.hpp"
#include "corpus_stats.hpp"
#include "sequence_stream.hpp"
#include "synth_layer.hpp"
#include "error.hpp"
#include "input_limits.hpp"
#include "layer_options.hpp"
#include "memory_budget.hpp"
#include "poisoned_heads.hpp"
#include "report_options.hpp"
#include "output_dir.hpp"
#include "report.hpp"
#include "stats_report.hpp"
#include "timings.hpp"

namespace attn_viz_cli {
namespace {

struct RunOptions {
    attn_viz::LayerSource layer;
    LayerOptionValues layer_values;
    ReportOptionValues report_values;
    InputLimits limits;
    std::vector<std::string> inputs;
    std::string corpus, save_partial, tokens, input_tensor, context, out;
    attn_viz::ReportOptions report;
    bool quiet = false, force = false, timings = false;
};

// "seq_03": the name of sequence `index` of a batch.
std::string sequence_name(size_t index) {
    char name[32];
    std::snprintf(name, sizeof name, "seq_%02zu", index);
    return name;
}

// "a.npy" -> "a.seq_03.npy": one dump per sequence of a batch.
std::string per_sequence(const std::string& path, size_t index) {
    if (path.empty()) return path;
    const std::string suffix = "." + sequence_name(index);
    const size_t dot = path.rfind('.');
    return dot == std::string::npos || path.find('/', dot) != std::string::npos ? path + suffix
                                                                                 : path.substr(0, dot) + suffix + path.substr(dot);
}

// With --allow-nonfinite, names the heads NaN/Inf values reach.
void warn_poisoned_heads(const attn_viz::LayerResult& result, const std::string& prefix) {
    const std::vector<std::string> poisoned = attn_viz::poisoned_heads(result);
    if (poisoned.empty()) return;
    std::string names;
    for (const std::string& head : poisoned) names += (names.empty() ? "" : ", ") + head;
    std::fprintf(stderr, "attn-viz: warning: %snon-finite values reach %s\n", prefix.c_str(), names.c_str());
}

// The products' floating-point operations of one run of the layer, for the GFLOP/s of --timings.
double layer_flops(const attn_viz::LayerResult& result, const attn_viz::LayerWeights& w) {
    const attn_viz::Visibility& v = result.visibility;
    return attn_viz::attention_flops(v.queries, v.keys, w.d_model, w.num_heads, w.num_kv_heads, w.d_head, true, v.causal);
}

// Corpus mode: every sequence through the layer and the analysis, one at a time, into running
// moments; memory does not depend on the number of sequences.
std::string run_corpus(const RunOptions& o, const attn_viz::LayerWeights& weights, attn_viz::AttentionLayer& layer,
                       const attn_viz::WeightSimilarities& weight_similarity, attn_viz::OutputDir& out,
                       attn_viz::Timings& timings, double& flops) {
    using namespace attn_viz;
    SequenceStream stream(o.corpus, weights.d_model);
    CorpusAccumulator corpus(layer_fingerprint(weights), o.report.thresholds);
    AnalysisOptions options;
    options.thresholds = o.report.thresholds;
    options.threads = resolve_threads(o.report.threads);
    options.weight_similarity = &weight_similarity;
    SequenceInput sequence;
    std::string where;
    while (true) {
        {
            Timings::Scope t(timings, "load");
            if (!stream.next(sequence, where)) break;
        }
        AttentionRequest request;
        request.input = &sequence.embeddings;
        request.key_excluded = sequence.key_excluded;
        LayerResult result;
        {
            Timings::Scope t(timings, "attention");
            result = layer.run(request);
        }
        warn_poisoned_heads(result, where + ": ");
        flops += layer_flops(result, weights);
        Timings::Scope t(timings, "statistics");
        corpus.add(analyze_layer(result, &weights, token_ids_from_labels(sequence.tokens), options),
                   sequence_fingerprint(sequence.embeddings, sequence.key_excluded));
        layer.recycle(std::move(result));
    }
    if (corpus.num_sequences() == 0) fail_input(o.corpus, "holds no sequences");
    const ModelAnalysis report = corpus.finish(o.report.thresholds);
    write_analysis_outputs(out, "", report, nlohmann::json::object(), o.report);
    if (!o.save_partial.empty()) corpus.save_partial(out.external_file(o.save_partial));
    return stats_table(report) + std::to_string(corpus.num_sequences()) + " sequences from " + o.corpus + "\n";
}

int run(RunOptions& o) {
    using namespace attn_viz;
    apply_input_limits(o.limits);
    resolve_layer_options(o.layer, o.layer_values);
    resolve_report_options(o.report, o.report_values);
    const bool batch = o.inputs.size() > 1;
    std::vector<std::string> input_files = o.inputs;
    input_files.insert(input_files.end(), {o.layer.path, o.context, o.tokens, o.corpus});
    check_output_files({o.report.dump_attention, o.report.dump_output, o.save_partial}, input_files, o.out);

    // Step 1: read and validate every input before anything is written.
    Timings timings;
    OutputDir out(o.out, o.force);
    out.protect_inputs(input_files);
    LayerWeights weights;
    std::vector<SequenceInput> inputs;
    SequenceInput context;
    {
        Timings::Scope t(timings, "load");
        weights = load_layer_weights(o.layer);
        for (const std::string& path : o.inputs) inputs.push_back(load_sequence({path, o.tokens, o.input_tensor}, weights.d_model));
        if (!o.context.empty()) context = load_sequence({o.context, "", ""}, weights.d_model);
    }

    for (const SequenceInput& input : inputs) {
        const int64_t S = o.context.empty() ? input.embeddings.dim(0) : context.embeddings.dim(0);
        check_memory(estimate_layer_run_bytes(weights.d_model, weights.num_heads, weights.num_kv_heads, weights.d_head,
                                              input.embeddings.dim(0), S),
                     "running the layer on " + std::to_string(input.embeddings.dim(0)) + " x " + std::to_string(S) + " tokens");
    }

    // Step 2: each sequence through the layer on oneDNN (primitives are reused across sequences
    // of one length; the first run of a shape includes JIT code generation), then its pictures,
    // statistics and dumps, staged; at the end everything moves into place together.
    OnednnBackend backend(o.report.threads);
    AttentionLayer layer(backend, weights);
    WeightSimilarities weight_similarity;
    {
        Timings::Scope t(timings, "weights");
        weight_similarity = weight_similarities({&weights}, false, backend);
    }
    std::string tables;
    double flops = 0;
    if (!o.corpus.empty()) tables = run_corpus(o, weights, layer, weight_similarity, out, timings, flops);
    for (size_t n = 0; n < inputs.size(); ++n) {
        const SequenceInput& keys = o.context.empty() ? inputs[n] : context;
        AttentionRequest request;
        request.input = &inputs[n].embeddings;
        request.context = o.context.empty() ? nullptr : &context.embeddings;
        request.key_excluded = keys.key_excluded;
        LayerResult result;
        {
            Timings::Scope t(timings, "attention");
            result = layer.run(request);
        }
        warn_poisoned_heads(result, batch ? "sequence " + std::to_string(n) + ": " : "");
        flops += layer_flops(result, weights);
        ReportOptions report = o.report;
        report.dump_attention = batch ? per_sequence(o.report.dump_attention, n) : o.report.dump_attention;
        report.dump_output = batch ? per_sequence(o.report.dump_output, n) : o.report.dump_output;
        ReportInput in{{&result}, {&weights}, inputs[n].tokens, keys.tokens, false, ""};
        if (o.context.empty()) in.token_ids = token_ids_from_labels(inputs[n].tokens);
        in.weight_similarity = &weight_similarity;
        if (batch) in.folder = sequence_name(n) + "/";
        const std::string table = stats_table(write_report(out, in, report, timings));
        tables += batch ? "sequence " + std::to_string(n) + " (" + in.folder + ")\n" + table : table;
        layer.recycle(std::move(result));
    }
    {
        Timings::Scope t(timings, "commit");
        out.commit();
    }
    if (!o.quiet) {
        std::fputs(tables.c_str(), stdout);
        std::printf("wrote %s\n", o.out.c_str());
    }
    std::fflush(stdout);
    if (o.timings)
        std::fprintf(stderr, "timings:\n%s  attention rate %.1f GFLOP/s (%.3f GFLOP)\n", timings.table().c_str(),
                     flops / timings.seconds("attention") * 1e-9, flops * 1e-9);
    return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand("run", "Run one multi-head attention layer on a sequence and write a heatmap per head, "
                                              "statistics (stats.json, CSV) and optional dumps.");
    cmd->add_option("--weights", o->layer.path,
                    "Layer weights: attn-viz/weights@1 JSON (tensors inline or {\"npy\": file}), or a .safetensors "
                    "checkpoint with --layout")
        ->required()->check(CLI::ExistingFile);
    cmd->add_option("--input", o->inputs,
                    "Input sequence: JSON {\"tokens\", \"embeddings\", \"attention_mask\"}, or embeddings [T, D] as .npy or "
                    ".safetensors. Repeat for a batch: each sequence gets its own folder seq_NN/")
        ->check(CLI::ExistingFile);
    auto* corpus = cmd->add_option("--inputs", o->corpus,
                                   "Corpus mode: a JSONL file (one input object per line) or a folder of input JSON files; "
                                   "every statistic is aggregated (mean and std per head) with memory independent of their number")
                       ->check(CLI::ExistingPath);
    cmd->add_option("--save-partial", o->save_partial, "Corpus mode: also write the running sums (attn-viz/partial@1) for attn-viz merge")
        ->needs(corpus);
    cmd->add_option("--tokens", o->tokens, "Token labels for .npy/.safetensors embeddings: JSON list or one token per line")
        ->check(CLI::ExistingFile);
    cmd->add_option("--input-tensor", o->input_tensor, "Name of the embeddings tensor in a .safetensors input");
    cmd->add_option("--context", o->context, "Cross-attention: keys and values come from this sequence (same formats as "
                                             "--input); maps are T x S. Its attention_mask masks keys")
        ->check(CLI::ExistingFile);
    cmd->add_option("--out", o->out, "Output directory (created; a previous run's files there are replaced)")->required();
    cmd->add_option("--dump-attention", o->report.dump_attention,
                    "Also write the attention weights as float32 .npy [H, T, S] (a batch: one file per sequence, NAME.seq_NN.npy)");
    cmd->add_option("--dump-output", o->report.dump_output, "Also write the layer output as float32 .npy [T, D]");
    add_layer_options(cmd, o->layer, o->layer_values);
    add_report_options(cmd, o->report, o->report_values);
    add_input_limit_options(cmd, o->limits);
    cmd->add_flag("--timings", o->timings, "Print the time of each stage (load, attention, statistics, pictures, commit) on stderr");
    cmd->add_flag("--force", o->force, "Write into a non-empty directory that holds files of something else");
    cmd->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
    cmd->callback([o, &action] {
        if (o->inputs.empty() == o->corpus.empty()) throw CLI::ValidationError("--input", "give --input (one or more) or --inputs, not both");
        if (!o->corpus.empty() && (!o->context.empty() || !o->report.dump_attention.empty() || !o->report.dump_output.empty() ||
                                   o->report.html || !o->report.svg.empty()))
            throw CLI::ValidationError("--inputs", "corpus mode keeps no maps: --context, --dump-*, --html and --svg need --input");
        action = [o] { return run(*o); };
    });
}

}  // namespace attn_viz_cli
