// attn-viz run: one attention layer, end to end.
#include <cstdio>
#include <memory>

#include "attention.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "input_file.hpp"
#include "memory_budget.hpp"
#include "nonfinite.hpp"
#include "output_dir.hpp"
#include "report.hpp"
#include "timings.hpp"
#include "weights_file.hpp"

namespace attn_viz_cli {
namespace {

struct RunOptions {
    std::string weights, input, context, out, max_memory;
    attn_viz::ReportOptions report;
    bool quiet = false, force = false, timings = false, allow_nonfinite = false;
};

int run(const RunOptions& o) {
    using namespace attn_viz;
    // Step 1: read and validate every input before anything is written.
    if (!o.max_memory.empty()) set_memory_budget(parse_memory_size(o.max_memory));
    set_allow_nonfinite(o.allow_nonfinite);
    for (const std::string* dump : {&o.report.dump_attention, &o.report.dump_output})
        refuse_overwriting_inputs(*dump, {o.weights, o.input, o.context});
    Timings timings;
    OutputDir out(o.out, o.force);
    out.protect_inputs({o.weights, o.input, o.context});
    LayerWeights weights;
    SequenceInput input, context;
    {
        Timings::Scope t(timings, "load");
        weights = read_weights_file(o.weights);
        input = read_input_file(o.input, weights.d_model);
        if (!o.context.empty()) context = read_input_file(o.context, weights.d_model);
    }
    const SequenceInput& keys = o.context.empty() ? input : context;
    check_memory(estimate_layer_run_bytes(weights.d_model, weights.num_heads, weights.num_kv_heads, weights.d_head,
                                          input.embeddings.dim(0), keys.embeddings.dim(0)),
                 "running the layer on " + std::to_string(input.embeddings.dim(0)) + " x " +
                     std::to_string(keys.embeddings.dim(0)) + " tokens");

    // Step 2: the layer on oneDNN (the first run of a shape includes JIT code generation).
    OnednnBackend backend(o.report.threads);
    AttentionLayer layer(backend, weights);
    AttentionRequest request;
    request.input = &input.embeddings;
    request.context = o.context.empty() ? nullptr : &context.embeddings;
    request.key_excluded = keys.key_excluded;
    LayerResult result;
    {
        Timings::Scope t(timings, "attention");
        result = layer.run(request);
    }
    if (const std::vector<std::string> poisoned = poisoned_heads(result); !poisoned.empty()) {
        std::string names;
        for (const std::string& head : poisoned) names += (names.empty() ? "" : ", ") + head;
        std::fprintf(stderr, "attn-viz: warning: non-finite values reach %s\n", names.c_str());
    }

    // Step 3: pictures, statistics and dumps, staged, then moved into place together.
    const std::string table = write_report(out, {{&result}, input.tokens, keys.tokens, false}, o.report, timings);
    {
        Timings::Scope t(timings, "commit");
        out.commit();
    }
    if (!o.quiet) {
        std::fputs(table.c_str(), stdout);
        std::printf("wrote %s\n", o.out.c_str());
    }
    if (o.timings) {
        const int64_t T = result.visibility.queries, S = result.visibility.keys;
        const double flops = attention_flops(T, S, weights.d_model, weights.num_heads, weights.num_kv_heads, weights.d_head, true);
        std::fprintf(stderr, "timings:\n%s  attention rate %.1f GFLOP/s (%.3f GFLOP)\n",
                     timings.table().c_str(), flops / timings.seconds("attention") * 1e-9, flops * 1e-9);
    }
    return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& action) {
    auto o = std::make_shared<RunOptions>();
    CLI::App* cmd = app.add_subcommand("run", "Run one multi-head attention layer on a sequence and write a heatmap per head, "
                                              "stats.json and optional dumps.");
    cmd->add_option("--weights", o->weights, "Layer weights: attn-viz/weights@1 JSON (tensors inline or {\"npy\": file})")
        ->required()->check(CLI::ExistingFile);
    cmd->add_option("--input", o->input, "Input sequence JSON: {\"tokens\": [...], \"embeddings\": [[...]] or {\"npy\": file}}")
        ->required()->check(CLI::ExistingFile);
    cmd->add_option("--context", o->context, "Cross-attention: keys and values come from this sequence (same format as --input); "
                                             "maps are T x S. Its attention_mask masks keys")
        ->check(CLI::ExistingFile);
    cmd->add_option("--out", o->out, "Output directory (created; a previous run's files there are replaced)")->required();
    cmd->add_option("--dump-attention", o->report.dump_attention, "Also write the attention weights as float32 .npy [H, T, T]");
    cmd->add_option("--dump-output", o->report.dump_output, "Also write the layer output as float32 .npy [T, D]");
    cmd->add_option("--threads", o->report.threads, "Threads for oneDNN, PNG encoding and statistics (default: all cores)")
        ->check(CLI::Range(0, 1024));
    cmd->add_flag("--timings", o->timings, "Print the time of each stage (load, attention, statistics, pictures, write) on stderr");
    cmd->add_flag("--force", o->force, "Write into a non-empty directory that holds files of something else");
    cmd->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
    cmd->add_option("--max-memory", o->max_memory, "Refuse inputs and runs needing more memory than this (e.g. 8G, 512M, "
                                                   "1000000 bytes; default 75% of physical memory)");
    cmd->add_flag("--allow-nonfinite", o->allow_nonfinite, "Load NaN/Inf weights and embeddings instead of refusing them, "
                                                           "and name the heads they reach on stderr");
    cmd->callback([o, &action] { action = [o] { return run(*o); }; });
}

}  // namespace attn_viz_cli
