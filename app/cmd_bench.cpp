// attn-viz bench: the machine's limit and the attention pass (or a model's forward pass, block by
// block) measured side by side in one process, so ratios hold on a noisy shared machine.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attention.hpp"
#include "commands.hpp"
#include "error.hpp"
#include "layer_cost.hpp"
#include "onednn_backend.hpp"
#include "output_options.hpp"
#include "parallel_for.hpp"
#include "timings.hpp"
#include "whole_model.hpp"

namespace attn_viz_cli {
namespace {

struct BenchOptions {
    int64_t d_model = 768, heads = 12, kv_heads = 0, tokens = 512, matmul_size = 2048;
    int repeat = 5, threads = 0;
    bool causal = false, cpu_time = false;
    std::string model;  // --model: a model's forward pass instead of one random layer
    bool tokens_given = false;
};

void declare_bench_options(CLI::App* cmd, BenchOptions& o) {
    cmd->description(
        "Measure this machine's oneDNN f32 matmul rate and one attention layer's pass (cold and warm) side by "
        "side, on random data; or, with --model, a model's forward pass block by block against it.");
    CLI::Option* model =
        cmd->add_option("--model", o.model,
                        "Instead of one random layer, this model's forward pass (any model `attn-viz model` opens) on "
                        "random token ids, block by block: each block's GFLOP/s against the matmul rate read just "
                        "before and just after it (a GGUF block's time includes decoding its weights)");
    CLI::Option* d_model =
        cmd->add_option("--d-model", o.d_model, "Model width D")->capture_default_str()->check(CLI::Range(1, 65536));
    CLI::Option* heads = cmd->add_option("--heads", o.heads, "Query heads H (must divide D)")
                             ->capture_default_str()
                             ->check(CLI::Range(1, 4096));
    CLI::Option* kv_heads =
        cmd->add_option("--kv-heads", o.kv_heads, "Key/value heads (default: H)")->check(CLI::Range(0, 4096));
    CLI::Option* tokens =
        cmd->add_option("--tokens", o.tokens, "Sequence length T (with --model: default 512 or the model's limit)")
            ->capture_default_str()
            ->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--matmul-size", o.matmul_size, "Side of the square matmul that measures the machine's rate")
        ->capture_default_str()
        ->check(CLI::Range(16, 16384));
    cmd->add_option("--repeat", o.repeat, "Timed repetitions (best is reported)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    add_threads_option(cmd, o.threads, "oneDNN");
    CLI::Option* causal = cmd->add_flag("--causal", o.causal, "Causal mask");
    for (CLI::Option* layer_shape : {d_model, heads, kv_heads, causal}) model->excludes(layer_shape);
    cmd->add_flag(
        "--cpu-time", o.cpu_time,
        "Time by the process's CPU time instead of the wall clock: with --threads 1, ratios that other "
        "processes' load on a shared machine barely moves (with more threads it counts OpenMP's spin-waiting too)");
    cmd->parse_complete_callback([&o, tokens] {
        o.tokens_given = tokens->count() > 0;
        if (o.d_model % o.heads != 0) throw CLI::ValidationError("--heads", "must divide --d-model");
        if (o.kv_heads && o.heads % o.kv_heads != 0) throw CLI::ValidationError("--kv-heads", "must divide --heads");
    });
}

attn_viz::Tensor random_tensor(std::vector<int64_t> shape, float scale, std::mt19937& rng) {
    attn_viz::Tensor t(std::move(shape));
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (float& x : t.data) x = dist(rng);
    return t;
}

// The processor's name from /proc/cpuinfo ("unknown" where there is none, as off Linux).
std::string cpu_model() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
            return line.substr(line.find(':') + 2);
    return "unknown";
}

// Seconds on the wall clock, or of CPU time used by the whole process (all threads).
double now(bool cpu_time) {
    if (!cpu_time) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The fastest and the mean of `repeat` timed calls, in seconds, after one untimed warm-up call.
struct RepeatTimes {
    double best = 1e30, mean = 0;
};

template <typename F>
RepeatTimes repeat_times(int repeat, bool cpu_time, F&& f) {
    f();
    RepeatTimes times;
    for (int i = 0; i < repeat; ++i) {
        const double start = now(cpu_time);
        f();
        const double seconds = now(cpu_time) - start;
        times.best = std::min(times.best, seconds);
        times.mean += seconds / repeat;
    }
    return times;
}

// The machine's limit: the rate of a large square f32 matmul on random data.
class MatmulProbe {
public:
    MatmulProbe(attn_viz::OnednnBackend& backend, int64_t n, std::mt19937& rng)
        : backend_(backend),
          n_(n),
          a_(random_tensor({n, n}, 1.0f, rng)),
          b_(random_tensor({n, n}, 1.0f, rng)),
          c_({n, n}) {}

    // GFLOP per second (or per CPU second) of the fastest of `repeat` products and of their mean
    // time (what a longer computation running through the same load would get).
    struct Rates {
        double best, mean;
    };
    Rates rates(int repeat, bool cpu_time) {
        const RepeatTimes t = repeat_times(repeat, cpu_time, [&] {
            backend_.matmul(attn_viz::dense_matmul(n_, n_, n_), a_.ptr(), b_.ptr(), nullptr, c_.ptr());
        });
        const double gflop = 2.0 * static_cast<double>(n_) * n_ * n_ * 1e-9;
        return {gflop / t.best, gflop / t.mean};
    }

private:
    attn_viz::OnednnBackend& backend_;
    int64_t n_;
    attn_viz::Tensor a_, b_, c_;
};

// Units of the printed figures: wall clock or CPU time.
struct Units {
    const char* ms;
    const char* rate;
};

// Step 2: one attention layer of the requested shape: first (cold, with JIT) and warm runs.
void bench_layer(const BenchOptions& o, attn_viz::OnednnBackend& backend, double matmul_rate, Units units,
                 std::mt19937& rng) {
    using namespace attn_viz;
    LayerWeights w;
    w.d_model = o.d_model, w.num_heads = o.heads, w.num_kv_heads = o.kv_heads ? o.kv_heads : o.heads;
    w.d_head = o.d_model / o.heads, w.causal = o.causal;
    const float scale = 1.0f / std::sqrt(static_cast<float>(o.d_model));
    w.w_q = random_tensor({w.d_model, w.num_heads * w.d_head}, scale, rng);
    w.w_k = random_tensor({w.d_model, w.num_kv_heads * w.d_head}, scale, rng);
    w.w_v = random_tensor({w.d_model, w.num_kv_heads * w.d_head}, scale, rng);
    w.w_o = random_tensor({w.num_heads * w.d_head, w.d_model}, scale, rng);
    const Tensor x = random_tensor({o.tokens, o.d_model}, 1.0f, rng);
    AttentionLayer layer(backend, w);
    for (bool shares : {false, true}) {
        AttentionRequest request;
        request.input = &x;
        request.with_contributions = shares;
        const double start = now(o.cpu_time);
        layer.recycle(layer.run(request));
        const double cold = now(o.cpu_time) - start;
        // Warm runs reuse the previous map's memory, as batches and corpora do (AttentionLayer::recycle).
        const double warm = repeat_times(o.repeat, o.cpu_time, [&] { layer.recycle(layer.run(request)); }).best;
        const double flops =
            attention_flops(o.tokens, o.tokens, w.d_model, w.num_heads, w.num_kv_heads, w.d_head, shares, o.causal);
        std::printf(
            "attention D=%lld H=%lld KV=%lld T=%lld%s%s: %.2f GFLOP, warm %.2f %s = %.1f %s (%.0f%% of matmul), "
            "cold %.2f %s\n",
            static_cast<long long>(w.d_model), static_cast<long long>(w.num_heads),
            static_cast<long long>(w.num_kv_heads), static_cast<long long>(o.tokens), o.causal ? " causal" : "",
            shares ? " +shares" : "", flops * 1e-9, warm * 1e3, units.ms, flops / warm * 1e-9, units.rate,
            100.0 * flops / warm * 1e-9 / matmul_rate, cold * 1e3, units.ms);
    }
}

// The model of --model, and the tokens its pass takes: --tokens, or 512 within the model's limit.
struct BenchModel {
    std::unique_ptr<attn_viz::WholeModel> model;
    int64_t tokens = 0;
};

BenchModel open_bench_model(const BenchOptions& o, attn_viz::OnednnBackend& backend) {
    using namespace attn_viz;
    BenchModel b{open_whole_model(backend, o.model), 0};
    b.model->keep_attention_weights(false);  // a streamed model's blocks are not kept for later analyses
    const int64_t limit = b.model->description().max_tokens;
    b.tokens = o.tokens_given ? o.tokens : std::min(o.tokens, limit);
    if (b.tokens > limit)
        throw Error(ErrorKind::bad_input,
                    fmt::format("--tokens {}: {} takes at most {} tokens", b.tokens, o.model, limit));
    return b;
}

// The median, smallest and largest of `values` (not empty), as percentages.
struct Spread {
    double median, low, high;
};

Spread percent_spread(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {100.0 * median, 100.0 * values.front(), 100.0 * values.back()};
}

// Step 2 with --model: the model's forward pass on T random token ids, block by block (a streamed
// model's blocks loaded on the way, as `attn-viz model` runs them; no output shares, no logits).
// Each block is timed alone and set against the matmul rates read just before and just after it
// (the mean of the two readings), so the ratio holds while a shared machine's speed drifts over a
// long pass: against the fastest product of each reading (the machine's peak under no load) and
// against their mean time (what a computation running through the same load gets).
void bench_model(const BenchOptions& o, BenchModel& b, MatmulProbe& probe, MatmulProbe::Rates first, Units units,
                 std::mt19937& rng) {
    using namespace attn_viz;
    WholeModel& model = *b.model;
    const ModelDescription& m = model.description();
    const int64_t T = b.tokens;
    std::uniform_int_distribution<int> token(0, static_cast<int>(m.vocab_size - 1));
    std::vector<int> ids(static_cast<size_t>(T));
    for (int& id : ids) id = token(rng);
    std::printf("model %s, T=%lld\n", model_description(o.model, m).c_str(), static_cast<long long>(T));

    ForwardRequest request;
    request.contributions = false, request.logits = false;
    MatmulProbe::Rates before = first;
    double total_flops = 0, total_seconds = 0;
    std::vector<double> of_best, of_mean;  // each block's rate over the matmul's around it
    double start = now(o.cpu_time);
    model.run_blocks(ids, request, [&](size_t l, LayerResult&, Tensor&, const LayerWeights& attention) {
        const double seconds = now(o.cpu_time) - start;
        const double flops = block_flops(attention, model.weights().config, T);
        const MatmulProbe::Rates after = probe.rates(o.repeat, o.cpu_time);
        const double best = (before.best + after.best) / 2, mean = (before.mean + after.mean) / 2;
        const double rate = flops / seconds * 1e-9;
        std::printf(
            "block %zu: %.4g GFLOP in %.2f %s = %.1f %s; matmul around it %.1f best, %.1f mean (%.0f%% of "
            "best, %.0f%% of mean)\n",
            l, flops * 1e-9, seconds * 1e3, units.ms, rate, units.rate, best, mean, 100.0 * rate / best,
            100.0 * rate / mean);
        total_flops += flops, total_seconds += seconds;
        of_best.push_back(rate / best), of_mean.push_back(rate / mean);
        before = after;
        start = now(o.cpu_time);
    });
    const Spread best = percent_spread(of_best), mean = percent_spread(of_mean);
    std::printf(
        "forward, %zu blocks: %.4g GFLOP in %.3f s = %.1f %s; per block (median) %.0f%% of the matmul's best "
        "rate around it (%.0f-%.0f%%), %.0f%% of its mean (%.0f-%.0f%%)\n",
        of_best.size(), total_flops * 1e-9, total_seconds, total_flops / total_seconds * 1e-9, units.rate, best.median,
        best.low, best.high, mean.median, mean.low, mean.high);
}

int bench(const BenchOptions& o) {
    using namespace attn_viz;
    std::mt19937 rng(42);
    use_threads(o.threads);
    OnednnBackend backend;
    BenchModel model;  // opened (and its --tokens checked) before anything is measured
    if (!o.model.empty()) model = open_bench_model(o, backend);
    std::printf("cpu: %s; oneDNN ISA: %s\n", cpu_model().c_str(), effective_isa_name().c_str());

    // Step 1: the roofline: a large square f32 matmul.
    MatmulProbe probe(backend, o.matmul_size, rng);
    const MatmulProbe::Rates matmul = probe.rates(o.repeat, o.cpu_time);
    const Units units = o.cpu_time ? Units{"CPU ms", "GFLOP per CPU s"} : Units{"ms", "GFLOP/s"};
    std::printf("oneDNN f32 matmul %lldx%lld: %.1f %s (best of %d)\n", static_cast<long long>(o.matmul_size),
                static_cast<long long>(o.matmul_size), matmul.best, units.rate, o.repeat);

    // Step 2: what is measured against it.
    if (o.model.empty())
        bench_layer(o, backend, matmul.best, units, rng);
    else
        bench_model(o, model, probe, matmul, units, rng);
    return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "bench", declare_bench_options, bench);
}

}  // namespace attn_viz_cli
