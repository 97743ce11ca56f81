// Command-line options for what a run writes (pictures, HTML, thresholds), shared by run and model.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report.hpp"

namespace attn_viz_cli {

struct ReportOptionValues {
    std::string scale = "head", pool = "mean", window, svg, map = "weights";
    bool no_labels = false;
    std::vector<std::string> thresholds;  // "name=value"
};

// Adds --colormap, --log-scale, --scale, --map, --max-px, --pool, --window, --no-labels, --svg, --html,
// --sparse-error, --threshold and --threads.
void add_report_options(CLI::App* cmd, attn_viz::ReportOptions& options, ReportOptionValues& values);

// Parses the textual values into `options` (Error(usage) naming the option on a bad one).
void resolve_report_options(attn_viz::ReportOptions& options, const ReportOptionValues& values);

}  // namespace attn_viz_cli
