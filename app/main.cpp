// attn-viz: the command-line front end. Thin: each subcommand lives in app/cmd_*.cpp and calls
// the library; errors are caught here, once, printed on one line with the option that gets past
// them (the library never names options), and mapped to exit codes.
#include <malloc.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "error.hpp"
#include "onednn_backend.hpp"
#include "output_dir.hpp"
#include "provenance.hpp"
#include "usage_errors.hpp"

namespace {

// glibc serves blocks above a moving threshold (128 KB at first) with fresh mmap()s and gives the
// heap's top back to the kernel as soon as it is free, so every picture canvas, PNG buffer and
// per-sequence tensor of a few MB was page-faulted anew: a third of the page faults of a T = 512
// run. Blocks up to 32 MB now come from the heap and freed memory stays for the next one
// (measured at T = 512: 18.8k -> 12.9k page faults, wall ~10% shorter). The attention map and
// anything else above 32 MB is still mmap()ed and returned when freed.
void keep_freed_memory_for_reuse() {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

// The option that does what an error's Remedy says, as a hint to append to its message, for the
// command line `args` of `app` (an option as the user typed it, one the command takes).
std::string remedy_hint(attn_viz::Remedy remedy, const CLI::App& app, const std::vector<std::string>& args) {
    using attn_viz::Remedy;
    switch (remedy) {
        case Remedy::none:
            return "";
        case Remedy::allow_nonfinite:
            return " (use --allow-nonfinite to load it anyway)";
        case Remedy::raise_memory_budget:
            return " (--max-memory)";
        case Remedy::force_output_dir:
            return " (use --force to write into it anyway)";
        case Remedy::replace_earlier_run:
            return " (use --force to replace it)";
        case Remedy::give_num_heads:
            return " (pass --num-heads)";
        case Remedy::give_num_kv_heads:
            return " (pass --num-kv-heads)";
        case Remedy::give_layout:
            return " (pass --layout)";
        case Remedy::change_layout:
            return " (pick another --layout or a --prefix)";
        case Remedy::swap_model_files:
            return fmt::format(" ({} takes the model, --tokenizer its tokenizer: are the two swapped?)",
                               attn_viz_cli::typed_option_name(app, args, "--checkpoint"));
        case Remedy::run_whole_model:
            return " (run a whole model with attn-viz model --checkpoint M.bin --tokenizer T.bin)";
        case Remedy::truncate_text:
            return attn_viz_cli::command_takes_option(app, args, "--truncate")
                       ? " (--truncate cuts it to the context, as transformers' truncation=True)"
                       : "";
    }
    return "";
}

// Everything a command printed reaches standard output, or the run fails with an I/O error: a full
// disk (> /dev/full) or a closed file shows only when the buffered output is flushed.
void flush_standard_output() {
    errno = 0;
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return;
    const int error_number = errno;
    if (error_number == 0) throw attn_viz::Error(attn_viz::ErrorKind::io, "standard output: write failed");
    throw attn_viz::Error(attn_viz::ErrorKind::io,
                          fmt::format("standard output: write failed: {}", std::strerror(error_number)));
}

}  // namespace

int main(int argc, char** argv) {
    keep_freed_memory_for_reuse();
    attn_viz::cap_onednn_isa();
    attn_viz::install_interrupt_cleanup();
    attn_viz_cli::record_command_line(argc, argv);

    CLI::App app{
        "attn-viz: run multi-head attention with oneDNN, draw every head, and report what each head does.\n"
        "Exit status: 0 success, 1 threshold exceeded (compare --fail-above), 2 usage, 3 bad input,\n"
        "4 I/O error, 5 internal error, 130 interrupted.",
        "attn-viz"};
    app.set_version_flag("--version", ATTN_VIZ_VERSION);
    app.require_subcommand(1);

    attn_viz_cli::CommandAction action;
    attn_viz_cli::add_commands(app, action);

    const std::vector<std::string> args(argv + 1, argv + argc);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
        std::fprintf(stderr, "attn-viz: error: %s\n", attn_viz_cli::usage_error_message(app, args, e).c_str());
        return attn_viz::exit_code(attn_viz::ErrorKind::usage);
    }
    try {
        const int status = action ? action() : 0;
        flush_standard_output();
        return status;
    } catch (const attn_viz::Error& e) {
        std::fprintf(stderr, "attn-viz: error: %s%s\n", e.what(), remedy_hint(e.remedy(), app, args).c_str());
        return attn_viz::exit_code(e.kind());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "attn-viz: error: out of memory\n");
        return attn_viz::exit_code(attn_viz::ErrorKind::internal);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "attn-viz: internal error: %s\n", e.what());
        return attn_viz::exit_code(attn_viz::ErrorKind::internal);
    }
}
