// The options several commands share, declared once: where a command writes and how much it
// prints (--out, --force, -q/--quiet), and the analysis knobs --threshold and --threads.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "head_labels.hpp"
#include "output_dir.hpp"

namespace attn_viz_cli {

struct OutputOptionValues {
    std::string out;  // the output directory ("" only where --out is optional)
    bool force = false, quiet = false;
};

// How one command describes its output options in --help.
struct OutputHelp {
    std::string out;  // what --out holds
    bool out_required = true;
    std::string quiet = "Print nothing on success";
};

// Adds --out, --force and -q/--quiet.
void add_output_options(CLI::App* cmd, OutputOptionValues& values, const OutputHelp& help);

// For run and model, whose --out is optional with --json: without --out, --json prints the
// summary and nothing is written. Refuses (CLI::RequiredError or ValidationError, exit 2) no
// --out without --json, and without --out any of `files` (an option's name and whether it was
// given) that writes a file: dumps, --save-partial, --html, --svg.
void check_out_or_json(const OutputOptionValues& values, bool json,
                       const std::vector<std::pair<std::string, bool>>& files);

// The run's output directory: --out, or without it one that keeps nothing (OutputDir::KeepNothing).
std::unique_ptr<attn_viz::OutputDir> open_output_dir(const OutputOptionValues& values);

// Adds --threshold NAME=VALUE (repeatable).
void add_threshold_option(CLI::App* cmd, std::vector<std::string>& assignments);

// `base` (by default the default thresholds) with every --threshold assignment applied (Error
// usage on a bad one).
attn_viz::LabelThresholds parse_thresholds(const std::vector<std::string>& assignments,
                                           attn_viz::LabelThresholds base = {});

// Adds --threads N (0, the default, = all cores); `users` says what runs on them.
void add_threads_option(CLI::App* cmd, int& threads, const std::string& users);

}  // namespace attn_viz_cli
