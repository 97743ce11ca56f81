// --max-memory and --allow-nonfinite: how much hostile input a command accepts (run, model).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace attn_viz_cli {

struct InputLimits {
    std::string max_memory;
    bool allow_nonfinite = false;
};

void add_input_limit_options(CLI::App* cmd, InputLimits& limits);

// Installs the process-wide memory budget and non-finite switch (before any input is read).
void apply_input_limits(const InputLimits& limits);

}  // namespace attn_viz_cli
