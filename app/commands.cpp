#include "commands.hpp"

namespace attn_viz_cli {

void add_commands(CLI::App& app, CommandAction& action) {
    add_run_command(app, action);
}

}  // namespace attn_viz_cli
