// attn-viz bench: what it reports about the machine, and the ISA cap taken from the environment.
#include <string>

#include <doctest/doctest.h>

#include "support.hpp"

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

}  // TEST_SUITE("cli")
