#include "commands.hpp"

namespace attn_viz_cli {

// analysis branch, for local testing only: the lead declares these in commands.hpp.
void add_merge_command(CLI::App& app, CommandAction& action);
void add_synth_command(CLI::App& app, CommandAction& action);
void add_compare_command(CLI::App& app, CommandAction& action);

void add_commands(CLI::App& app, CommandAction& action) {
    add_run_command(app, action);
    add_merge_command(app, action);
    add_synth_command(app, action);
    add_compare_command(app, action);
}

}  // namespace attn_viz_cli
