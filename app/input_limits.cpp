#include "input_limits.hpp"

#include <fmt/format.h>

#include "option_checks.hpp"
#include "option_parsing.hpp"

namespace attn_viz_cli {

void add_memory_budget_option(CLI::App* cmd, InputLimitValues& values, const std::string& what) {
    cmd->add_option("--max-memory", values.max_memory,
                    fmt::format("Refuse {} needing more memory than this (e.g. 8G, 512M, 1000000 bytes; default 75% "
                                "of physical memory)",
                                what))
        ->check(refuse_empty("names no size"));
}

void add_input_limit_options(CLI::App* cmd, InputLimitValues& values) {
    add_memory_budget_option(cmd, values, "inputs and runs");
    cmd->add_flag(
        "--allow-nonfinite", values.allow_nonfinite,
        "Load NaN/Inf weights and embeddings instead of refusing them, and name the heads they reach on stderr");
}

attn_viz::LoadLimits load_limits(const InputLimitValues& values) {
    attn_viz::LoadLimits limits;
    if (!values.max_memory.empty())
        limits.memory_budget =
            parse_option("--max-memory", [&] { return attn_viz::parse_memory_size(values.max_memory); });
    limits.allow_nonfinite = values.allow_nonfinite;
    return limits;
}

}  // namespace attn_viz_cli
