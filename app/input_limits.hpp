// --max-memory and --allow-nonfinite: how much hostile input a command accepts (run, model),
// turned into the LoadLimits every loader and run estimate is given.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "load_limits.hpp"

namespace attn_viz_cli {

struct InputLimitValues {
    std::string max_memory;  // "" = the default budget
    bool allow_nonfinite = false;
};

void add_input_limit_options(CLI::App* cmd, InputLimitValues& values);

// --max-memory alone, for a command that loads no weights ("Refuse <what> needing more memory...").
void add_memory_budget_option(CLI::App* cmd, InputLimitValues& values, const std::string& what);

// The limits the options ask for (Error usage on a --max-memory that is not a size).
attn_viz::LoadLimits load_limits(const InputLimitValues& values);

}  // namespace attn_viz_cli
