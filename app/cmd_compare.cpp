// attn-viz compare: two checkpoints of one layer architecture on one input (or two whole models,
// compare_models.hpp), head by head, with an exit status for CI (--fail-above).
#include <cmath>
#include <cstdio>

#include "attention.hpp"
#include "commands.hpp"
#include "compare_models.hpp"
#include "error.hpp"
#include "file_write.hpp"
#include "head_compare.hpp"
#include "input_file.hpp"
#include "onednn_backend.hpp"
#include "option_parsing.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "ranked_compare.hpp"
#include "report.hpp"
#include "token_ids.hpp"
#include "weights_file.hpp"

namespace attn_viz_cli {
namespace {

struct CompareOptions {
    std::string weights_a, weights_b, input, fail_metric = "js_distance";
    std::vector<std::string> thresholds;
    double fail_above = -1;  // < 0: no check
    int threads = 0;
    OutputOptionValues output;
    ModelCompareInput model_input;  // whole models (GGUF, llama2.c): the tokens both run over
};

void declare_options(CLI::App* cmd, CompareOptions& o) {
    cmd->description("Compare two checkpoints of one layer head by head on one input: labels, statistic changes, and how "
                     "alike each head's maps are.");
    cmd->add_option("weights_a", o.weights_a, "First weights file (attn-viz/weights@1), or a whole model (GGUF, llama2.c .bin)")
        ->required()->check(CLI::ExistingFile);
    cmd->add_option("weights_b", o.weights_b, "Second weights file or model, same architecture")->required()->check(CLI::ExistingFile);
    cmd->add_option("--input", o.input, "Input sequence JSON (as for run; layer weights files)")->check(CLI::ExistingFile);
    cmd->add_option("--text", o.model_input.text, "Text both models run over (models; encoded with BOS first)");
    cmd->add_option("--tokens", o.model_input.token_ids, "Token ids both models run over instead of --text (models)");
    cmd->add_option("--tokenizer", o.model_input.tokenizer, "llama2.c tokenizer (models; a GGUF model's own without it)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--fail-above", o.fail_above, "Exit 1 when any head's --fail-metric exceeds this")->check(CLI::NonNegativeNumber);
    cmd->add_option("--fail-metric", o.fail_metric,
                    "js_distance (default: JS distance between the head's two maps), correlation_distance (1 - their "
                    "correlation) or a statistic name (absolute change)");
    add_threshold_option(cmd, o.thresholds);
    add_threads_option(cmd, o.threads, "oneDNN and statistics");
    add_output_options(cmd, o.output, {"Also write DIR/compare.json", false, "Print nothing but failures"});
}

// 1 when --fail-above is given and some head's --fail-metric exceeds it (each such head named).
int exit_status(const CompareOptions& o, const attn_viz::HeadComparison& c) {
    using namespace attn_viz;
    const std::vector<double> metric = comparison_metric(c, o.fail_metric);
    if (o.fail_above < 0) return 0;
    const std::vector<int64_t> failing = heads_above(metric, o.fail_above);
    for (int64_t n : failing)
        std::fprintf(stderr, "attn-viz: head %lld: %s %.6g exceeds %g\n", static_cast<long long>(n), o.fail_metric.c_str(),
                     metric[static_cast<size_t>(n)], o.fail_above);
    return failing.empty() ? 0 : 1;
}

int compare_models(const CompareOptions& o, const attn_viz::AnalysisOptions& options, const attn_viz::LoadLimits& limits) {
    using namespace attn_viz;
    if (o.model_input.text.empty() == o.model_input.token_ids.empty())
        throw Error(ErrorKind::usage, "compare of two models needs one of --text or --tokens");
    const ModelComparison m = compare_llama_models(o.weights_a, o.weights_b, o.model_input, options, o.threads, limits);
    if (!o.output.out.empty()) {
        OutputDir out(o.output.out, o.output.force);
        nlohmann::json doc = comparison_json(m.heads);
        for (size_t n = 0; n < m.top1.size(); ++n)
            doc["heads"][n]["top1_agreement"] = std::isnan(m.top1[n]) ? nlohmann::json() : nlohmann::json(m.top1[n]);
        write_file_atomically(out.file("compare.json"), doc.dump(1) + "\n");
        write_distance_picture(out.file("js_distance.png"), m.heads);
        out.commit();
    }
    if (!o.output.quiet) std::fputs(ranked_comparison_table(m.heads, m.top1).c_str(), stdout);
    return exit_status(o, m.heads);
}

int compare(const CompareOptions& o) {
    using namespace attn_viz;
    // Step 1: options, weights and input, all validated before any work.
    AnalysisOptions options;
    options.thresholds = parse_thresholds(o.thresholds);
    options.threads = resolve_threads(o.threads);
    // An unknown metric fails here, before any work.
    parse_option("--fail-metric", [&] { return comparison_metric(HeadComparison{}, o.fail_metric); });
    const LoadLimits limits;
    if (is_llama_model_file(o.weights_a) || is_llama_model_file(o.weights_b)) return compare_models(o, options, limits);
    if (o.input.empty()) throw Error(ErrorKind::usage, "compare of layer weights files needs --input");
    const LayerWeights a = read_weights_file(o.weights_a, limits), b = read_weights_file(o.weights_b, limits);
    if (a.d_model != b.d_model || a.num_heads != b.num_heads || a.num_kv_heads != b.num_kv_heads || a.causal != b.causal)
        fail_input(o.weights_b, "a different architecture from " + o.weights_a + " (d_model, heads, KV heads or causal)");
    const SequenceInput input = read_input_file(o.input, a.d_model, limits);

    // Step 2: both layers on oneDNN (from this thread only), then the comparison.
    OnednnBackend backend(o.threads);
    AttentionRequest request;
    request.input = &input.embeddings;
    request.key_excluded = input.key_excluded;
    AttentionLayer layer_a(backend, a), layer_b(backend, b);
    const LayerResult result_a = layer_a.run(request), result_b = layer_b.run(request);
    const HeadComparison c = compare_runs({&result_a}, {&a}, {&result_b}, {&b}, token_ids_from_labels(input.tokens), options);

    // Step 3: report, then the exit status.
    if (!o.output.out.empty()) {
        OutputDir out(o.output.out, o.output.force);
        write_file_atomically(out.file("compare.json"), comparison_json(c).dump(1) + "\n");
        out.commit();
    }
    if (!o.output.quiet) std::fputs(comparison_table(c).c_str(), stdout);
    return exit_status(o, c);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandAction& action) { add_command(app, action, "compare", declare_options, compare); }

}  // namespace attn_viz_cli
