// Registration of subcommands. Each app/cmd_*.cpp defines one add_*_command; when CLI11 parses
// that subcommand its callback stores what to run in `action`, and main() runs it inside its
// one try/catch.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace attn_viz_cli {

using CommandAction = std::function<int()>;

void add_run_command(CLI::App& app, CommandAction& action);
void add_bench_command(CLI::App& app, CommandAction& action);
void add_model_command(CLI::App& app, CommandAction& action);
void add_compare_command(CLI::App& app, CommandAction& action);
void add_merge_command(CLI::App& app, CommandAction& action);
void add_synth_command(CLI::App& app, CommandAction& action);

// Adds every subcommand (app/commands.cpp lists them).
void add_commands(CLI::App& app, CommandAction& action);

}  // namespace attn_viz_cli
