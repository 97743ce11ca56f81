// attn-viz model: a whole Llama-style model (llama2.c checkpoint) forward over a text, every
// layer's heads drawn and analysed.
#include <cstdio>
#include <memory>

#include "onednn_backend.hpp"
#include "token_ids.hpp"
#include "layer_cost.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "head_analysis.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "input_limits.hpp"
#include "llama_model.hpp"
#include "memory_budget.hpp"
#include "poisoned_heads.hpp"
#include "output_dir.hpp"
#include "report_options.hpp"
#include "stats_report.hpp"
#include "token_file.hpp"

namespace attn_viz_cli {
namespace {

struct ModelOptions {
    std::string checkpoint, tokenizer, text, token_ids, out;
    int64_t induction = 0;
    uint64_t seed = 0;
    int generate = 0;
    attn_viz::ReportOptions report;
    ReportOptionValues report_values;
    InputLimits limits;
    bool quiet = false, force = false, timings = false;
};

int run_model(ModelOptions& o) {
    using namespace attn_viz;
    apply_input_limits(o.limits);
    resolve_report_options(o.report, o.report_values);
    check_output_files({o.report.dump_attention, o.report.dump_output}, {o.checkpoint, o.tokenizer}, o.out);

    // Step 1: the model, the tokenizer and the token ids, all validated before anything is written.
    Timings timings;
    OutputDir out(o.out, o.force);
    out.protect_inputs({o.checkpoint, o.tokenizer});
    std::unique_ptr<Llama2cTokenizer> tokenizer;
    LlamaWeights weights;
    std::vector<int> ids;
    {
        Timings::Scope t(timings, "load");
        weights = read_llama2c_checkpoint(o.checkpoint);
        tokenizer = std::make_unique<Llama2cTokenizer>(o.tokenizer, weights.config.vocab_size);
        if (o.induction > 0) {
            // Random tokens (ids past the byte tokens) repeated twice, after BOS.
            const std::vector<int64_t> repeated = repeated_random_tokens(o.induction, 259, weights.config.vocab_size, o.seed);
            ids.push_back(Llama2cTokenizer::bos_id);
            ids.insert(ids.end(), repeated.begin(), repeated.end());
        } else if (!o.token_ids.empty()) {
            ids = parse_token_ids(o.token_ids, "--tokens");
        } else {
            ids = tokenizer->encode(o.text, /*bos=*/true, /*eos=*/false);
        }
    }

    const Llama2cConfig& c = weights.config;
    check_memory(c.n_layers * estimate_layer_run_bytes(c.dim, c.n_heads, c.n_kv_heads, c.dim / c.n_heads,
                                                       static_cast<int64_t>(ids.size()), static_cast<int64_t>(ids.size())),
                 "running " + std::to_string(c.n_layers) + " layers on " + std::to_string(ids.size()) + " tokens");

    // Step 2: the forward pass on oneDNN.
    OnednnBackend backend(o.report.threads);
    LlamaModel model(backend, std::move(weights));
    ModelRun run;
    {
        Timings::Scope t(timings, "forward");
        run = model.run(ids);
    }
    for (size_t l = 0; l < run.layers.size(); ++l)
        for (const std::string& head : poisoned_heads(run.layers[l]))
            std::fprintf(stderr, "attn-viz: warning: non-finite values reach layer %zu %s\n", l, head.c_str());

    // Step 3: every layer's pictures and statistics.
    ReportInput in;
    for (const LayerResult& r : run.layers) in.layers.push_back(&r);
    for (const LlamaBlockWeights& b : model.weights().layers) in.weights.push_back(&b.attention);
    in.query_tokens = in.key_tokens = tokenizer->labels(ids);
    in.layer_folders = true;
    in.token_ids.assign(ids.begin(), ids.end());
    WeightSimilarities weight_similarity;
    {
        Timings::Scope t(timings, "weights");
        weight_similarity = weight_similarities(in.weights, false, backend);
    }
    in.weight_similarity = &weight_similarity;
    const ModelAnalysis analysis = write_report(out, in, o.report, timings);

    std::string continuation;
    if (o.generate > 0) {
        Timings::Scope t(timings, "generate");
        const std::vector<int> generated = greedy_generate(model, ids, o.generate);
        continuation = tokenizer->decode(generated);
    }
    {
        Timings::Scope t(timings, "commit");
        out.commit();
    }
    if (!o.quiet) {
        std::printf("%zu tokens: %s\n", ids.size(), tokenizer->decode(ids).c_str());
        std::fputs(stats_table(analysis).c_str(), stdout);
        if (!continuation.empty()) std::printf("greedy continuation: %s\n", continuation.c_str());
        std::printf("wrote %s\n", o.out.c_str());
    }
    std::fflush(stdout);
    if (o.timings) std::fprintf(stderr, "timings:\n%s", timings.table().c_str());
    return 0;
}

}  // namespace

void add_model_command(CLI::App& app, CommandAction& action) {
    auto o = std::make_shared<ModelOptions>();
    CLI::App* cmd = app.add_subcommand("model", "Run a whole Llama-style model (llama2.c checkpoint) over a text and draw and "
                                                "analyse every layer's heads (layer_NN/head_NN.png, stats.json over all heads).");
    cmd->add_option("--checkpoint", o->checkpoint, "llama2.c checkpoint (e.g. ../shared/models/stories260K/stories260K.bin)")
        ->required()->check(CLI::ExistingFile);
    cmd->add_option("--tokenizer", o->tokenizer, "llama2.c tokenizer (e.g. ../shared/models/stories260K/tok512.bin)")
        ->required()->check(CLI::ExistingFile);
    auto* text = cmd->add_option("--text", o->text, "Text to run (encoded with BOS first, as llama2.c does)");
    auto* tokens = cmd->add_option("--tokens", o->token_ids, "Token ids instead of text: 1,403,407");
    auto* induction = cmd->add_option("--induction", o->induction,
                                      "Induction test: BOS then N random tokens repeated twice; reports duplicate-token and "
                                      "induction scores for every head")
                          ->check(CLI::Range(1, 100000));
    text->excludes(tokens)->excludes(induction);
    tokens->excludes(induction);
    cmd->add_option("--seed", o->seed, "Seed of --induction's random tokens")->capture_default_str();
    cmd->add_option("--generate", o->generate, "Also print the model's greedy continuation of N tokens")->check(CLI::Range(0, 4096));
    cmd->add_option("--out", o->out, "Output directory (created; a previous run's files there are replaced)")->required();
    cmd->add_option("--dump-attention", o->report.dump_attention, "Also write every layer's attention as float32 .npy [L, H, T, T]");
    cmd->add_option("--dump-output", o->report.dump_output, "Also write the last layer's attention output as float32 .npy [T, D]");
    add_report_options(cmd, o->report, o->report_values);
    add_input_limit_options(cmd, o->limits);
    cmd->add_flag("--timings", o->timings, "Print the time of each stage on stderr");
    cmd->add_flag("--force", o->force, "Write into a non-empty directory that holds files of something else");
    cmd->add_flag("-q,--quiet", o->quiet, "Print nothing on success");
    cmd->callback([o, &action, text, tokens, induction] {
        if (!*text && !*tokens && !*induction) throw CLI::RequiredError("one of --text, --tokens or --induction");
        action = [o] { return run_model(*o); };
    });
}

}  // namespace attn_viz_cli
