#include "input_limits.hpp"

#include "memory_budget.hpp"
#include "finite.hpp"

namespace attn_viz_cli {

void add_input_limit_options(CLI::App* cmd, InputLimits& limits) {
    cmd->add_option("--max-memory", limits.max_memory,
                    "Refuse inputs and runs needing more memory than this (e.g. 8G, 512M, 1000000 bytes; "
                    "default 75% of physical memory)");
    cmd->add_flag("--allow-nonfinite", limits.allow_nonfinite,
                  "Load NaN/Inf weights and embeddings instead of refusing them, and name the heads they reach on stderr");
}

void apply_input_limits(const InputLimits& limits) {
    if (!limits.max_memory.empty()) attn_viz::set_memory_budget(attn_viz::parse_memory_size(limits.max_memory));
    attn_viz::set_allow_nonfinite(limits.allow_nonfinite);
}

}  // namespace attn_viz_cli
