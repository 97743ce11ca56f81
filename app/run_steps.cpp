#include "run_steps.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "memory_budget.hpp"

namespace attn_viz_cli {

void commit_outputs(attn_viz::OutputDir& out, attn_viz::Timings& timings) {
    attn_viz::Timings::Scope t(timings, "commit");
    out.commit();
}

std::string attention_rate(const attn_viz::Timings& timings, double flops) {
    return fmt::format("  attention rate {:.1f} GFLOP/s ({:.3f} GFLOP)\n", flops / timings.seconds("attention") * 1e-9,
                       flops * 1e-9);
}

std::string peak_memory_line() {
    return fmt::format("  peak RSS          {:10.1f} MB\n",
                       static_cast<double>(attn_viz::peak_resident_bytes()) / (1 << 20));
}

void print_timings(const attn_viz::Timings& timings, const std::string& extra) {
    std::fflush(stdout);
    std::fprintf(stderr, "timings:\n%s%s", timings.table().c_str(), extra.c_str());
}

}  // namespace attn_viz_cli
