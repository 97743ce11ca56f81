#include "commands.hpp"

namespace attn_viz_cli {

void add_commands(CLI::App& app, CommandAction& action) {
    add_run_command(app, action);
    add_model_command(app, action);
    add_compare_command(app, action);
    add_merge_command(app, action);
    add_synth_command(app, action);
    add_tokenize_command(app, action);
    add_bench_command(app, action);
}

}  // namespace attn_viz_cli
