// attn-viz bench: the machine's limit and the attention pass measured side by side in one process,
// so ratios hold on a noisy shared machine.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <random>
#include <string>

#include "attention.hpp"
#include "commands.hpp"
#include "layer_cost.hpp"
#include "onednn_backend.hpp"
#include "output_options.hpp"
#include "parallel_for.hpp"
#include "timings.hpp"

namespace attn_viz_cli {
namespace {

struct BenchOptions {
    int64_t d_model = 768, heads = 12, kv_heads = 0, tokens = 512, matmul_size = 2048;
    int repeat = 5, threads = 0;
    bool causal = false, cpu_time = false;
};

void declare_options(CLI::App* cmd, BenchOptions& o) {
    cmd->description(
        "Measure this machine's oneDNN f32 matmul rate and one attention layer's pass (cold and warm) side by "
        "side, on random data.");
    cmd->add_option("--d-model", o.d_model, "Model width D")->capture_default_str()->check(CLI::Range(1, 65536));
    cmd->add_option("--heads", o.heads, "Query heads H (must divide D)")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    cmd->add_option("--kv-heads", o.kv_heads, "Key/value heads (default: H)")->check(CLI::Range(0, 4096));
    cmd->add_option("--tokens", o.tokens, "Sequence length T")->capture_default_str()->check(CLI::Range(1, 1 << 20));
    cmd->add_option("--matmul-size", o.matmul_size, "Side of the square matmul that measures the machine's rate")
        ->capture_default_str()
        ->check(CLI::Range(16, 16384));
    cmd->add_option("--repeat", o.repeat, "Timed repetitions (best is reported)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000));
    add_threads_option(cmd, o.threads, "oneDNN");
    cmd->add_flag("--causal", o.causal, "Causal mask");
    cmd->add_flag(
        "--cpu-time", o.cpu_time,
        "Time by the process's CPU time instead of the wall clock: with --threads 1, ratios that other "
        "processes' load on a shared machine barely moves (with more threads it counts OpenMP's spin-waiting too)");
    cmd->parse_complete_callback([&o] {
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

// Best of `repeat` timed calls, in seconds, after one untimed warm-up call.
template <typename F>
double best_time(int repeat, bool cpu_time, F&& f) {
    f();
    double best = 1e30;
    for (int i = 0; i < repeat; ++i) {
        const double start = now(cpu_time);
        f();
        best = std::min(best, now(cpu_time) - start);
    }
    return best;
}

int bench(const BenchOptions& o) {
    using namespace attn_viz;
    std::mt19937 rng(42);
    use_threads(o.threads);
    OnednnBackend backend;
    std::printf("cpu: %s; oneDNN ISA: %s\n", cpu_model().c_str(), effective_isa_name().c_str());

    // Step 1: the roofline: a large square f32 matmul.
    const int64_t n = o.matmul_size;
    Tensor a = random_tensor({n, n}, 1.0f, rng), b = random_tensor({n, n}, 1.0f, rng), c({n, n});
    const double matmul_s = best_time(
        o.repeat, o.cpu_time, [&] { backend.matmul(dense_matmul(n, n, n), a.ptr(), b.ptr(), nullptr, c.ptr()); });
    const double matmul_rate = 2.0 * n * n * n / matmul_s * 1e-9;
    const char* ms = o.cpu_time ? "CPU ms" : "ms";
    const char* rate = o.cpu_time ? "GFLOP per CPU s" : "GFLOP/s";
    std::printf("oneDNN f32 matmul %lldx%lld: %.1f %s (best of %d)\n", static_cast<long long>(n),
                static_cast<long long>(n), matmul_rate, rate, o.repeat);

    // Step 2: one attention layer of the requested shape: first (cold, with JIT) and warm runs.
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
        const double warm = best_time(o.repeat, o.cpu_time, [&] { layer.recycle(layer.run(request)); });
        const double flops =
            attention_flops(o.tokens, o.tokens, w.d_model, w.num_heads, w.num_kv_heads, w.d_head, shares, o.causal);
        std::printf(
            "attention D=%lld H=%lld KV=%lld T=%lld%s%s: %.2f GFLOP, warm %.2f %s = %.1f %s (%.0f%% of matmul), "
            "cold %.2f %s\n",
            static_cast<long long>(w.d_model), static_cast<long long>(w.num_heads),
            static_cast<long long>(w.num_kv_heads), static_cast<long long>(o.tokens), o.causal ? " causal" : "",
            shares ? " +shares" : "", flops * 1e-9, warm * 1e3, ms, flops / warm * 1e-9, rate,
            100.0 * flops / warm * 1e-9 / matmul_rate, cold * 1e3, ms);
    }
    return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, CommandAction& action) {
    add_command(app, action, "bench", declare_options, bench);
}

}  // namespace attn_viz_cli
