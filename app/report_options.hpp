// Command-line options for what a run writes (pictures, HTML, thresholds), shared by run and model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report.hpp"

namespace attn_viz_cli {

struct ReportOptionValues {
    std::string scale = "global", pool = "max", window, svg, map = "weights", vmin, vmax;
    bool no_labels = false;
    std::vector<std::string> thresholds;  // "name=value"
};

// Adds --colormap, --log-scale, --scale, --vmin, --vmax, --map, --max-px, --pool, --window,
// --no-labels, --svg, --html, --sparse-error, --threshold and --threads.
void add_report_options(CLI::App* cmd, attn_viz::ReportOptions& options, ReportOptionValues& values);

// Parses the textual values into `options` (Error(usage) naming the option on a bad one).
// run_layer: the checkpoint layer `run --layer N` runs, which --svg names as LNHx.
void resolve_report_options(attn_viz::ReportOptions& options, const ReportOptionValues& values,
                            std::optional<int64_t> run_layer = std::nullopt);

// "hint: ..." lines for stdout when the pictures came out mostly dark on a linear scale (long
// causal maps of spread-out heads), naming the option that shows their structure; "" otherwise.
std::string picture_hint(const attn_viz::PictureNotes& notes, const attn_viz::ReportOptions& options);

}  // namespace attn_viz_cli
