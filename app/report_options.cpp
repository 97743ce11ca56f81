#include "report_options.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "colormap.hpp"
#include "head_names.hpp"
#include "option_checks.hpp"
#include "option_parsing.hpp"
#include "output_options.hpp"

namespace attn_viz_cli {
namespace {

// --svg: "3" = head 3 of the first layer drawn; "L2H3", "l2h3" or "2:3" = layer 2, head 3, which
// under run_layer (run --layer N) must be that layer (the run's only one).
attn_viz::HeadId parse_svg_head(const std::string& text, std::optional<int64_t> run_layer) {
    const attn_viz::HeadName name = attn_viz::parse_head_name(text, "--svg", true);
    if (!name.layer) return {0, name.head};
    if (!run_layer) return {*name.layer, name.head};
    if (*name.layer != *run_layer)
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("--svg '{}': {} is not drawn: run draws layer {} only", text,
                                          attn_viz::head_name(*name.layer, name.head), *run_layer));
    return {0, name.head};
}

// --vmin / --vmax: a finite number.
float parse_color_end(const std::string& option, const std::string& text) {
    char* end = nullptr;
    const float value = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(value))
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("{} '{}': expected a finite number", option, text));
    return value;
}

}  // namespace

void add_report_options(CLI::App* cmd, attn_viz::ReportOptions& o, ReportOptionValues& v) {
    cmd->add_option("--colormap", o.style.colormap, "Heatmap colors: viridis, magma, inferno, plasma or gray")
        ->capture_default_str()
        ->check(CLI::IsMember(attn_viz::Colormap::names()));
    cmd->add_flag("--log-scale", o.style.log_scale, "Logarithmic color scale (floor: 1e-4 of the largest weight)");
    cmd->add_option("--scale", v.scale,
                    "Color range: one shared by every head, from 0 to the largest weight (global), or each head's own "
                    "smallest..largest weight (head)")
        ->capture_default_str()
        ->check(CLI::IsMember({"head", "global"}));
    cmd->add_option("--vmin", v.vmin, "Fixed bottom of every map's color range (weights below take the bottom color)")
        ->check(refuse_empty("is not a number"));
    cmd->add_option("--vmax", v.vmax, "Fixed top of every map's color range (weights above take the top color)")
        ->check(refuse_empty("is not a number"));
    cmd->add_option(
           "--map", v.map,
           "What the attention pictures show: the weights a_ij, or norm = a_ij ||v_j W_O^h|| (Kobayashi et al. 2020); "
           "statistics always use the weights")
        ->capture_default_str()
        ->check(CLI::IsMember({"weights", "norm"}));
    cmd->add_option("--max-px", o.style.max_px, "Largest picture side in pixels; longer sequences pool cells")
        ->capture_default_str()
        ->check(CLI::Range(256, 16384));
    cmd->add_option("--pool", v.pool, "How pooled cells combine weights: max (sharp diagonals stay visible) or mean")
        ->capture_default_str()
        ->check(CLI::IsMember({"mean", "max"}));
    cmd->add_option("--window", v.window, "Draw only queries [q0, q1) x keys [k0, k1) at full resolution: q0:q1,k0:k1")
        ->check(refuse_empty("names no window"));
    cmd->add_flag("--no-labels", v.no_labels, "No token labels on the axes");
    cmd->add_option("--svg", v.svg,
                    "Also draw one head as SVG (vector, for papers): L1H3 or 1:3 (any case), or HEAD alone for the "
                    "first layer drawn")
        ->check(refuse_empty("names no head"));
    cmd->add_flag("--html", o.html,
                  "Also write report.html: self-contained, every head with hover, sortable statistics");
    cmd->add_flag("--sparse-error", o.sparse_error,
                  "Also measure each head's top-k / sink + window attention error and keys needed (sparse.csv)");
    add_threshold_option(cmd, v.thresholds);
    add_threads_option(cmd, o.threads, "oneDNN, PNG encoding and statistics");
}

void resolve_report_options(attn_viz::ReportOptions& o, const ReportOptionValues& v, std::optional<int64_t> run_layer) {
    o.scale = parse_option("--scale", [&] { return attn_viz::parse_scale_mode(v.scale); });
    o.style.pool = parse_option("--pool", [&] { return attn_viz::parse_pool_mode(v.pool); });
    o.map = parse_option("--map", [&] { return attn_viz::parse_picture_map(v.map); });
    if (!v.window.empty())
        o.style.window = parse_option("--window", [&] { return attn_viz::parse_cell_window(v.window); });
    o.style.labels = !v.no_labels;
    if (!v.svg.empty()) o.svg = parse_svg_head(v.svg, run_layer);
    o.thresholds = parse_thresholds(v.thresholds);
    if (!v.vmin.empty()) o.vmin = parse_color_end("--vmin", v.vmin);
    if (!v.vmax.empty()) o.vmax = parse_color_end("--vmax", v.vmax);
    if (o.vmin && o.vmax && !(*o.vmin < *o.vmax))
        throw attn_viz::Error(attn_viz::ErrorKind::usage,
                              fmt::format("--vmin {} must be below --vmax {}", v.vmin, v.vmax));
}

std::string picture_hint(const attn_viz::PictureNotes& notes, const attn_viz::ReportOptions& o) {
    if (o.style.log_scale || notes.dark_maps == 0) return "";
    return fmt::format(
        "hint: {} of {} maps are mostly dark (most query rows have no weight above a tenth of the color range, as in "
        "long causal maps); --log-scale shows their structure\n",
        notes.dark_maps, notes.maps);
}

}  // namespace attn_viz_cli
