// attn-viz model: a whole Llama-style model (llama2.c checkpoint) forward over a text, every
// layer's heads drawn and analysed: load the model and the token ids, check the run fits the
// memory budget, run the forward pass, write the report, commit, print.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "error.hpp"
#include "head_analysis.hpp"
#include "input_limits.hpp"
#include "layer_cost.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "llama_model.hpp"
#include "onednn_backend.hpp"
#include "output_dir.hpp"
#include "output_options.hpp"
#include "poisoned_heads.hpp"
#include "report_options.hpp"
#include "run_steps.hpp"
#include "stats_report.hpp"
#include "token_file.hpp"
#include "token_ids.hpp"

namespace attn_viz_cli {
namespace {

struct ModelOptions {
    std::string checkpoint, tokenizer, text, token_ids;
    int64_t induction = 0;
    uint64_t seed = 0;
    int generate = 0;
    attn_viz::ReportOptions report;
    ReportOptionValues report_values;
    InputLimitValues limit_values;
    OutputOptionValues output;
    bool timings = false;
};

void declare_options(CLI::App* cmd, ModelOptions& o) {
    cmd->description("Run a whole Llama-style model (llama2.c checkpoint) over a text and draw and analyse every layer's "
                     "heads (layer_NN/head_NN.png, stats.json over all heads).");
    cmd->add_option("--checkpoint", o.checkpoint, "llama2.c checkpoint (e.g. ../shared/models/stories260K/stories260K.bin)")
        ->required()->check(CLI::ExistingFile);
    cmd->add_option("--tokenizer", o.tokenizer, "llama2.c tokenizer (e.g. ../shared/models/stories260K/tok512.bin)")
        ->required()->check(CLI::ExistingFile);
    auto* text = cmd->add_option("--text", o.text, "Text to run (encoded with BOS first, as llama2.c does)");
    auto* tokens = cmd->add_option("--tokens", o.token_ids, "Token ids instead of text: 1,403,407");
    auto* induction = cmd->add_option("--induction", o.induction,
                                      "Induction test: BOS then N random tokens repeated twice; reports duplicate-token and "
                                      "induction scores for every head")
                          ->check(CLI::Range(1, 100000));
    text->excludes(tokens)->excludes(induction);
    tokens->excludes(induction);
    cmd->add_option("--seed", o.seed, "Seed of --induction's random tokens")->capture_default_str();
    cmd->add_option("--generate", o.generate, "Also print the model's greedy continuation of N tokens")->check(CLI::Range(0, 4096));
    add_output_options(cmd, o.output, {"Output directory (created; a previous run's files there are replaced)"});
    cmd->add_option("--dump-attention", o.report.dump_attention, "Also write every layer's attention as float32 .npy [L, H, T, T]");
    cmd->add_option("--dump-output", o.report.dump_output, "Also write the last layer's attention output as float32 .npy [T, D]");
    add_report_options(cmd, o.report, o.report_values);
    add_input_limit_options(cmd, o.limit_values);
    cmd->add_flag("--timings", o.timings, "Print the time of each stage on stderr");
    cmd->parse_complete_callback([text, tokens, induction] {
        if (!*text && !*tokens && !*induction) throw CLI::RequiredError("one of --text, --tokens or --induction");
    });
}

// The model, its tokenizer and the token ids to run, validated before anything is written.
struct ModelInputs {
    attn_viz::LlamaWeights weights;
    std::unique_ptr<attn_viz::Llama2cTokenizer> tokenizer;
    std::vector<int> ids;
};

// The token ids of --induction (BOS, then random tokens past the byte tokens, repeated twice),
// --tokens or --text (with BOS first, as llama2.c encodes).
std::vector<int> input_ids(const ModelOptions& o, const attn_viz::Llama2cTokenizer& tokenizer, int64_t vocab_size) {
    using namespace attn_viz;
    if (o.induction > 0) {
        const std::vector<int64_t> repeated = repeated_random_tokens(o.induction, 259, vocab_size, o.seed);
        std::vector<int> ids{Llama2cTokenizer::bos_id};
        ids.insert(ids.end(), repeated.begin(), repeated.end());
        return ids;
    }
    if (!o.token_ids.empty()) return parse_token_ids(o.token_ids, "--tokens");
    return tokenizer.encode(o.text, /*bos=*/true, /*eos=*/false);
}

ModelInputs load_inputs(const ModelOptions& o, const attn_viz::LoadLimits& limits, attn_viz::Timings& timings) {
    attn_viz::Timings::Scope t(timings, "load");
    ModelInputs in;
    in.weights = attn_viz::read_llama2c_checkpoint(o.checkpoint, limits);
    in.tokenizer = std::make_unique<attn_viz::Llama2cTokenizer>(o.tokenizer, in.weights.config.vocab_size);
    in.ids = input_ids(o, *in.tokenizer, in.weights.config.vocab_size);
    return in;
}

// Refuses (Error bad_input) a forward pass whose layer runs exceed the memory budget.
void check_run_memory(const ModelInputs& in, const attn_viz::LoadLimits& limits) {
    const attn_viz::Llama2cConfig& c = in.weights.config;
    const int64_t T = static_cast<int64_t>(in.ids.size());
    attn_viz::check_memory(c.n_layers * attn_viz::estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.dim / c.n_heads, T, T),
                           limits.memory_budget,
                           "running " + std::to_string(c.n_layers) + " layers on " + std::to_string(in.ids.size()) + " tokens");
}

attn_viz::ModelRun forward(attn_viz::LlamaModel& model, const std::vector<int>& ids, attn_viz::Timings& timings) {
    attn_viz::Timings::Scope t(timings, "forward");
    attn_viz::ModelRun run = model.run(ids);
    for (size_t l = 0; l < run.layers.size(); ++l)
        for (const std::string& head : attn_viz::poisoned_heads(run.layers[l]))
            std::fprintf(stderr, "attn-viz: warning: non-finite values reach layer %zu %s\n", l, head.c_str());
    return run;
}

// Every layer's pictures and statistics, staged in `out`.
attn_viz::ModelAnalysis write_model_report(attn_viz::OutputDir& out, const ModelOptions& o, const ModelInputs& in,
                                           const attn_viz::LlamaModel& model, const attn_viz::ModelRun& run,
                                           attn_viz::OnednnBackend& backend, attn_viz::Timings& timings) {
    using namespace attn_viz;
    ReportInput report;
    for (const LayerResult& r : run.layers) report.layers.push_back(&r);
    for (const LlamaBlockWeights& b : model.weights().layers) report.weights.push_back(&b.attention);
    report.query_tokens = report.key_tokens = in.tokenizer->labels(in.ids);
    report.layer_folders = true;
    report.token_ids.assign(in.ids.begin(), in.ids.end());
    WeightSimilarities weight_similarity;
    {
        Timings::Scope t(timings, "weights");
        weight_similarity = weight_similarities(report.weights, false, backend);
    }
    report.weight_similarity = &weight_similarity;
    return write_report(out, report, o.report, timings);
}

// --generate: the model's greedy continuation of the ids, as text ("" without it).
std::string continuation(const ModelOptions& o, const ModelInputs& in, attn_viz::LlamaModel& model,
                         attn_viz::Timings& timings) {
    if (o.generate <= 0) return "";
    attn_viz::Timings::Scope t(timings, "generate");
    return in.tokenizer->decode(attn_viz::greedy_generate(model, in.ids, o.generate));
}

int run_model(ModelOptions& o) {
    using namespace attn_viz;
    const LoadLimits limits = load_limits(o.limit_values);
    resolve_report_options(o.report, o.report_values);
    check_output_files({o.report.dump_attention, o.report.dump_output}, {o.checkpoint, o.tokenizer}, o.output.out);

    // Step 1: the model, the tokenizer and the token ids, and the run's size, all validated
    // before anything is written.
    Timings timings;
    OutputDir out(o.output.out, o.output.force);
    out.protect_inputs({o.checkpoint, o.tokenizer});
    ModelInputs in = load_inputs(o, limits, timings);
    check_run_memory(in, limits);

    // Step 2: the forward pass on oneDNN, then every layer's report and the continuation.
    OnednnBackend backend(o.report.threads);
    LlamaModel model(backend, std::move(in.weights));
    const ModelRun run = forward(model, in.ids, timings);
    const ModelAnalysis analysis = write_model_report(out, o, in, model, run, backend, timings);
    const std::string continued = continuation(o, in, model, timings);

    // Step 3: everything moves into place together; then what the user asked to see.
    commit_outputs(out, timings);
    if (!o.output.quiet) {
        std::printf("%zu tokens: %s\n", in.ids.size(), in.tokenizer->decode(in.ids).c_str());
        std::fputs(stats_table(analysis).c_str(), stdout);
        if (!continued.empty()) std::printf("greedy continuation: %s\n", continued.c_str());
        std::printf("wrote %s\n", o.output.out.c_str());
    }
    if (o.timings) print_timings(timings);
    return 0;
}

}  // namespace

void add_model_command(CLI::App& app, CommandAction& action) { add_command(app, action, "model", declare_options, run_model); }

}  // namespace attn_viz_cli
