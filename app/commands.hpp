// Registration of subcommands. Each app/cmd_*.cpp defines one add_*_command; when CLI11 parses
// that subcommand, what to run is stored in `action`, and main() runs it inside its one try/catch.
#pragma once

#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

namespace attn_viz_cli {

using CommandAction = std::function<int()>;

void add_run_command(CLI::App& app, CommandAction& action);
void add_bench_command(CLI::App& app, CommandAction& action);
void add_model_command(CLI::App& app, CommandAction& action);
void add_compare_command(CLI::App& app, CommandAction& action);
void add_merge_command(CLI::App& app, CommandAction& action);
void add_synth_command(CLI::App& app, CommandAction& action);
void add_tokenize_command(CLI::App& app, CommandAction& action);

// Adds every subcommand (app/commands.cpp lists them).
void add_commands(CLI::App& app, CommandAction& action);

// Adds subcommand `name`, whose option values live in an Options owned by the subcommand:
// `declare(cmd, options)` describes the subcommand and adds its options (checks that need several
// of them go in cmd's parse-complete callback); once CLI11 has parsed it, `action` becomes
// `run(options)`.
template <typename Options, typename Run>
void add_command(CLI::App& app, CommandAction& action, const char* name,
                 void (*declare)(CLI::App* cmd, Options& options), Run run) {
    auto options = std::make_shared<Options>();
    CLI::App* cmd = app.add_subcommand(name);
    declare(cmd, *options);
    cmd->final_callback([options, run, &action] { action = [options, run] { return run(*options); }; });
}

}  // namespace attn_viz_cli
