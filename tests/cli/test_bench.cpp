// attn-viz bench: what it reports about the machine, the ISA cap taken from the environment, and
// --model's forward pass block by block.
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "support.hpp"
#include "synthetic_gguf.hpp"

using namespace test_support;

namespace {

const std::string tiny_bench = " bench --d-model 16 --heads 2 --tokens 8 --matmul-size 32 --repeat 1 --threads 1";

// bench with ONEDNN_MAX_CPU_ISA set to `cap` ("" leaves it unset).
CommandResult bench_under(const std::string& cap, const std::string& options = "") {
    const std::string environment = cap.empty() ? "env -u ONEDNN_MAX_CPU_ISA" : "env ONEDNN_MAX_CPU_ISA=" + cap;
    return run_command(environment + " '" + attn_viz_binary() + "'" + tiny_bench + options);
}

// The ISA named on bench's first line ("cpu: <model>; oneDNN ISA: <isa>").
std::string reported_isa(const CommandResult& r) {
    const std::string label = "oneDNN ISA: ";
    const size_t at = r.output.find(label);
    if (at == std::string::npos) return "";
    const size_t from = at + label.size();
    return r.output.substr(from, r.output.find('\n', from) - from);
}

// The number just before " GFLOP" on the output line starting with `prefix` (-1 if none).
double gflop_on_line(const std::string& output, const std::string& prefix) {
    size_t at = output.rfind("\n" + prefix);
    at = at == std::string::npos ? (output.rfind(prefix, 0) == 0 ? 0 : std::string::npos) : at + 1;
    if (at == std::string::npos) return -1;
    const size_t unit = output.find(" GFLOP", at);
    const size_t number = output.rfind(' ', unit - 1) + 1;
    return std::atof(output.substr(number, unit - number).c_str());
}

}  // namespace

TEST_SUITE("cli") {

TEST_CASE("bench prints the CPU model and oneDNN's ISA, then the matmul rate and the attention pass against it") {
    const CommandResult r = bench_under("");
    CAPTURE(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.rfind("cpu: ", 0) == 0);
    CHECK(!reported_isa(r).empty());
    CHECK(reported_isa(r) != "avx512_core_amx");  // capped below AMX (SIGILL on this VM kind)
    CHECK(r.output.find("GFLOP/s (best of 1)") != std::string::npos);
    CHECK(r.output.find("% of matmul") != std::string::npos);

    const CommandResult cpu = bench_under("", " --cpu-time");
    CHECK(cpu.exit_code == 0);
    CHECK(cpu.output.find("GFLOP per CPU s (best of 1)") != std::string::npos);
    CHECK(cpu.output.find("CPU ms") != std::string::npos);
}

TEST_CASE("bench runs under ONEDNN_MAX_CPU_ISA when it caps below AMX, and below AMX when it asks for more") {
    const std::string native = reported_isa(bench_under(""));
    CAPTURE(native);
    if (native.rfind("avx512", 0) == 0) {  // a CPU with AVX2 and more: the cap decides
        const CommandResult avx2 = bench_under("AVX2");
        CAPTURE(avx2.output);
        CHECK(avx2.exit_code == 0);
        CHECK(reported_isa(avx2) == "avx2");
        CHECK(reported_isa(bench_under("avx512_core")) == "avx512_core");  // oneDNN reads the name in any case
    }
    for (const char* above : {"ALL", "AVX512_CORE_AMX"}) {
        CAPTURE(above);
        const CommandResult r = bench_under(above);
        CHECK(r.exit_code == 0);
        CHECK(reported_isa(r) == native);
    }
}

TEST_CASE("bench --model times a model's forward pass block by block against the matmul rate around each block") {
    ScratchDir dir;
    const std::string model = dir / "m.gguf";
    // D = 64, 2 layers, 4 heads sharing 2 KV heads (d_h = 16), FFN 96, vocab 300.
    make_synthetic_gguf(model, "Q8_0", {64, 2, 4, 2, 96, 300}, 5);
    const std::string bench = "bench --model " + model + " --matmul-size 32 --repeat 1 --threads 1";
    const CommandResult r = run_attn_viz(bench + " --tokens 16");
    CAPTURE(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(r.output.find("(llama, 2 layers x 4 heads), T=16\n") != std::string::npos);
    CHECK(r.output.find("block 2:") == std::string::npos);
    // Each block's products, counted here as scripts/forward_flops.sh counts them: Q, K, V and O,
    // the causal scores and P.V, three feed-forward matrices.
    const double T = 16, D = 64, H = 4, KV = 2, d_h = 16, F = 96;
    const double block = 2 * T * D * (2 * H * d_h + 2 * KV * d_h) + 4 * H * d_h * T * (T + 1) / 2 + 3 * 2 * T * D * F;
    for (const char* line : {"block 0: ", "block 1: "}) {
        CAPTURE(line);
        CHECK(gflop_on_line(r.output, line) == doctest::Approx(block * 1e-9).epsilon(1e-3));
    }
    CHECK(gflop_on_line(r.output, "forward, 2 blocks: ") == doctest::Approx(2 * block * 1e-9).epsilon(1e-3));
    CHECK(r.output.find("% of best, ") != std::string::npos);
    CHECK(r.output.find("per block (median) ") != std::string::npos);

    // Without --tokens: 512 tokens, within the model's 4096.
    const CommandResult plain = run_attn_viz(bench);
    CHECK(plain.exit_code == 0);
    CHECK(plain.output.find("T=512\n") != std::string::npos);

    // Refused: more tokens than the model takes, a file that is not there, a layer's shape beside --model.
    const CommandResult too_long = run_attn_viz(bench + " --tokens 4097");
    CHECK(too_long.exit_code != 0);
    CHECK(too_long.output.find("--tokens 4097: " + model + " takes at most 4096 tokens") != std::string::npos);
    const CommandResult missing = run_attn_viz("bench --model " + (dir / "none.gguf") + " --matmul-size 32 --repeat 1");
    CHECK(missing.exit_code != 0);
    CHECK(missing.output.find(dir / "none.gguf") != std::string::npos);
    CHECK(run_attn_viz(bench + " --d-model 128").exit_code != 0);
}

}  // TEST_SUITE("cli")
