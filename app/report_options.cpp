#include "report_options.hpp"

#include "colormap.hpp"
#include "head_labels.hpp"

namespace attn_viz_cli {

void add_report_options(CLI::App* cmd, attn_viz::ReportOptions& o, ReportOptionValues& v) {
    cmd->add_option("--colormap", o.style.colormap, "Heatmap colors: viridis, magma, inferno, plasma or gray")
        ->capture_default_str()->check(CLI::IsMember(attn_viz::Colormap::names()));
    cmd->add_flag("--log-scale", o.style.log_scale, "Logarithmic color scale (floor: 1e-4 of the largest weight)");
    cmd->add_option("--scale", v.scale, "Color range per head (head) or shared by every head (global)")
        ->capture_default_str()->check(CLI::IsMember({"head", "global"}));
    cmd->add_option("--max-px", o.style.max_px, "Largest picture side in pixels; longer sequences pool cells")
        ->capture_default_str()->check(CLI::Range(256, 16384));
    cmd->add_option("--pool", v.pool, "How pooled cells combine weights: mean or max")
        ->capture_default_str()->check(CLI::IsMember({"mean", "max"}));
    cmd->add_option("--window", v.window, "Draw only queries [q0, q1) x keys [k0, k1) at full resolution: q0:q1,k0:k1");
    cmd->add_flag("--no-labels", v.no_labels, "No token labels on the axes");
    cmd->add_option("--svg", o.svg, "Also draw one head as SVG (vector, for papers): HEAD, or LAYER:HEAD in model mode");
    cmd->add_flag("--html", o.html, "Also write report.html: self-contained, every head with hover, sortable statistics");
    cmd->add_option("--threshold", v.thresholds,
                    "Override a labelling threshold, NAME=VALUE (repeatable; names and defaults in docs/metrics.md)");
    cmd->add_option("--threads", o.threads, "Threads for oneDNN, PNG encoding and statistics (default: all cores)")
        ->check(CLI::Range(0, 1024));
}

void resolve_report_options(attn_viz::ReportOptions& o, const ReportOptionValues& v) {
    o.scale = attn_viz::parse_scale_mode(v.scale);
    o.style.pool = attn_viz::parse_pool_mode(v.pool);
    if (!v.window.empty()) o.style.window = attn_viz::parse_cell_window(v.window);
    o.style.labels = !v.no_labels;
    for (const std::string& t : v.thresholds) attn_viz::set_threshold(o.thresholds, t);
}

}  // namespace attn_viz_cli
