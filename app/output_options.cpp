#include "output_options.hpp"

#include <fmt/format.h>

#include "option_checks.hpp"
#include "option_parsing.hpp"

namespace attn_viz_cli {

void add_output_options(CLI::App* cmd, OutputOptionValues& values, const OutputHelp& help) {
    CLI::Option* out = cmd->add_option("--out", values.out, help.out)->check(refuse_empty("names no folder"));
    if (help.out_required) out->required();
    cmd->add_flag("--force", values.force,
                  "Replace the results of an earlier run in --out (kept without it), or write into a non-empty "
                  "directory that holds files of something else");
    cmd->add_flag("-q,--quiet", values.quiet, help.quiet);
}

void check_out_or_json(const OutputOptionValues& values, bool json,
                       const std::vector<std::pair<std::string, bool>>& files) {
    if (!values.out.empty()) return;
    if (!json) throw CLI::RequiredError("--out (or --json, to print the summary and write nothing)");
    for (const auto& [name, given] : files)
        if (given) throw CLI::ValidationError(name, "writes a file: give --out (without it, --json writes nothing)");
}

std::unique_ptr<attn_viz::OutputDir> open_output_dir(const OutputOptionValues& values) {
    if (values.out.empty()) return std::make_unique<attn_viz::OutputDir>(attn_viz::OutputDir::KeepNothing{});
    return std::make_unique<attn_viz::OutputDir>(values.out, values.force);
}

void add_threshold_option(CLI::App* cmd, std::vector<std::string>& assignments) {
    cmd->add_option(
        "--threshold", assignments,
        "Override a label or redundancy threshold, NAME=VALUE (repeatable; names and defaults in docs/metrics.md)");
}

attn_viz::LabelThresholds parse_thresholds(const std::vector<std::string>& assignments,
                                           attn_viz::LabelThresholds base) {
    for (const std::string& assignment : assignments)
        parse_option("--threshold", [&] { attn_viz::set_threshold(base, assignment); });
    return base;
}

void add_threads_option(CLI::App* cmd, int& threads, const std::string& users) {
    cmd->add_option("--threads", threads, fmt::format("Threads for {} (default: all cores)", users))
        ->check(CLI::Range(0, 1024));
}

}  // namespace attn_viz_cli
