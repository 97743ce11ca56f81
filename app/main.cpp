// attn-viz: the command-line front end. Thin: each subcommand lives in app/cmd_*.cpp and calls
// the library; errors are caught here, once, printed on one line, and mapped to exit codes.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "error.hpp"
#include "onednn_backend.hpp"
#include "output_dir.hpp"

int main(int argc, char** argv) {
    attn_viz::cap_onednn_isa();
    attn_viz::install_interrupt_cleanup();

    CLI::App app{"attn-viz: run multi-head attention with oneDNN, draw every head, and report what each head does.\n"
                 "Exit status: 0 success, 1 threshold exceeded (compare --fail-above), 2 usage, 3 bad input,\n"
                 "4 I/O error, 5 internal error, 130 interrupted.",
                 "attn-viz"};
    app.set_version_flag("--version", ATTN_VIZ_VERSION);
    app.require_subcommand(1);

    attn_viz_cli::CommandAction action;
    attn_viz_cli::add_commands(app, action);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : attn_viz::exit_code(attn_viz::ErrorKind::usage);
    }
    try {
        return action ? action() : 0;
    } catch (const attn_viz::Error& e) {
        std::fprintf(stderr, "attn-viz: error: %s\n", e.what());
        return attn_viz::exit_code(e.kind());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "attn-viz: error: out of memory\n");
        return attn_viz::exit_code(attn_viz::ErrorKind::internal);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn-viz: internal error: %s\n", e.what());
        return attn_viz::exit_code(attn_viz::ErrorKind::internal);
    }
}
