#include "report.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "analysis_pictures.hpp"
#include "error.hpp"
#include "figure_bar_chart.hpp"
#include "figure_matrix.hpp"
#include "figure_overview.hpp"
#include "file_write.hpp"
#include "findings.hpp"
#include "head_names.hpp"
#include "heatmap.hpp"
#include "html_report.hpp"
#include "json_text.hpp"
#include "model_analyses_summary.hpp"
#include "norm_attention.hpp"
#include "npy.hpp"
#include "parallel_for.hpp"
#include "png_writer.hpp"
#include "report_columns.hpp"
#include "sparse_report.hpp"
#include "stats_report.hpp"
#include "svg_heatmap.hpp"

namespace attn_viz {

Tensor stacked_attention(const std::vector<const LayerResult*>& layers, bool with_layer_axis) {
    const Tensor& first = layers.front()->attention;
    std::vector<int64_t> shape = first.shape;
    if (with_layer_axis) shape.insert(shape.begin(), static_cast<int64_t>(layers.size()));
    Tensor all(shape);
    for (size_t l = 0; l < layers.size(); ++l)
        std::copy(layers[l]->attention.data.begin(), layers[l]->attention.data.end(),
                  all.data.begin() + l * first.size());
    return all;
}

namespace {

std::string two_digits(int64_t n) { return fmt::format("{:02}", n); }

// What in.layer_numbers calls layer `layer` of `in` (itself without them).
int64_t layer_number(const ReportInput& in, int64_t layer) {
    return in.layer_numbers.empty() ? layer : in.layer_numbers[static_cast<size_t>(layer)];
}

// Where head (layer, head) of `in` goes: "head_03.png", "layer_01/head_03.svg", under in.folder.
std::string head_file(const ReportInput& in, int64_t layer, int64_t head, const char* extension) {
    const std::string layer_folder =
        in.layer_folders ? fmt::format("layer_{}/", two_digits(layer_number(in, layer))) : "";
    return fmt::format("{}{}head_{}{}", in.folder, layer_folder, two_digits(head), extension);
}

// `a` with its heads named by the layers' numbers (run --layer 3: L3H0, not L0H0), for what is
// written and printed; the pictures index in.layers by `a` itself.
ModelAnalysis numbered_analysis(const ModelAnalysis& a, const ReportInput& in) {
    ModelAnalysis named = a;
    for (HeadId& id : named.head_ids) id.layer = layer_number(in, id.layer);
    return named;
}

// "H3" for one layer, "L1H3" for a model: the labels of head-by-head matrices and charts.
std::string matrix_head_label(const ModelAnalysis& a, int64_t index) {
    const HeadId& id = a.head_ids[static_cast<size_t>(index)];
    return a.num_layers > 1 ? head_name(id.layer, id.head) : fmt::format("H{}", id.head);
}

// Head n's map (in a.head_ids order): weights [T, S].
const float* head_weights(const ReportInput& in, const ModelAnalysis& a, int64_t n) {
    const HeadId& id = a.head_ids[static_cast<size_t>(n)];
    const Visibility& vis = in.layers.front()->visibility;
    return in.layers[static_cast<size_t>(id.layer)]->attention.ptr() + id.head * vis.queries * vis.keys;
}

// Head n's picture style: its color range (map_color_range of its own and `all`, the extremes
// over every head) and a title with its layer, label and entropy. weights: [T, S] its map.
HeatmapStyle head_style(const ReportInput& in, const ReportOptions& o, const ModelAnalysis& a, int64_t n,
                        const float* weights, ValueRange all) {
    const HeadId& id = a.head_ids[static_cast<size_t>(n)];
    HeatmapStyle style = o.style;
    const ValueRange own =
        o.scale == ScaleMode::head ? visible_value_range(weights, in.layers.front()->visibility) : all;
    const ValueRange range = map_color_range(color_rule(o), own, all);
    style.vmin = range.vmin, style.vmax = range.vmax;
    const int64_t layer = layer_number(in, id.layer);
    style.title = fmt::format("layer {} head {} - {} - entropy {:.2f} nats", layer, id.head, shown_label(a, n),
                              a.heads[static_cast<size_t>(n)].entropy);
    return style;
}

// Throws Error(usage) when the head to draw (`what`: "svg head", "head"; an index into in.layers) is
// not one of the analysis' heads; the message names it by its layer's number.
void check_drawn_head(const HeadId& id, const ModelAnalysis& a, const ReportInput& in, const std::string& what) {
    if (id.layer >= 0 && id.layer < a.num_layers && id.head >= 0 && id.head < a.num_heads) return;
    const int64_t shown_layer = id.layer >= 0 && id.layer < a.num_layers ? layer_number(in, id.layer) : id.layer;
    const std::string heads = fmt::format("{}{}", a.num_heads, a.num_heads == 1 ? " head" : " heads");
    const std::string where = a.num_layers == 1 ? fmt::format("the layer has {}", heads)
                                                : fmt::format("the model has {} layers of {}", a.num_layers, heads);
    throw Error(ErrorKind::usage,
                fmt::format("{} {} is out of range: {}", what, head_name(shown_layer, id.head), where));
}

// The heads of `a` (indices into a.head_ids) that o.drawn selects, by their layer's number.
std::vector<int64_t> drawn_heads(const ReportInput& in, const ReportOptions& o, const ModelAnalysis& a) {
    std::vector<int64_t> drawn;
    for (int64_t n = 0; n < static_cast<int64_t>(a.head_ids.size()); ++n) {
        const HeadId& id = a.head_ids[static_cast<size_t>(n)];
        if (o.drawn.has_head(layer_number(in, id.layer), id.head)) drawn.push_back(n);
    }
    return drawn;
}

// Per-head PNGs of the selected heads (and the optional SVG), encoded on `threads` threads:
// oneDNN is not running now. all: the extremes over every head. Returns how many maps were drawn
// and how many of them are mostly dark.
PictureNotes write_head_pictures(OutputDir& out, const ReportInput& in, const ReportOptions& o, const ModelAnalysis& a,
                                 ValueRange all, int threads) {
    const Visibility& vis = in.layers.front()->visibility;
    const std::vector<int64_t> drawn = drawn_heads(in, o, a);
    // File names are chosen up front: OutputDir is not thread-safe.
    std::vector<std::string> paths;
    for (int64_t n : drawn) {
        const HeadId& id = a.head_ids[static_cast<size_t>(n)];
        paths.push_back(out.file(head_file(in, id.layer, id.head, ".png")));
    }
    std::vector<uint8_t> dark(paths.size(), 0);
    parallel_for(static_cast<int64_t>(paths.size()), threads, [&](int64_t k) {
        const int64_t n = drawn[static_cast<size_t>(k)];
        const float* weights = head_weights(in, a, n);
        const HeatmapStyle style = head_style(in, o, a, n, weights, all);
        write_head_png(paths[static_cast<size_t>(k)], weights, vis, in.query_tokens, in.key_tokens, style);
        dark[static_cast<size_t>(k)] = mostly_dark(weights, vis, ValueScale{style.vmin, style.vmax, style.log_scale});
    });
    if (o.svg) {
        const HeadId id = *o.svg;
        check_drawn_head(id, a, in, "svg head");
        const int64_t n = id.layer * a.num_heads + id.head;
        const float* weights = head_weights(in, a, n);
        write_head_svg(out.file(head_file(in, id.layer, id.head, ".svg")), weights, vis, in.query_tokens, in.key_tokens,
                       head_style(in, o, a, n, weights, all));
    }
    return {static_cast<int64_t>(drawn.size()), std::count(dark.begin(), dark.end(), 1)};
}

// What norm-based pictures say they show (--map norm): the colorbar, report.html's "Map".
constexpr const char* norm_colorbar_label = "norm-based: a_ij |v_j W_O|";
constexpr const char* norm_map_kind =
    "norm-based: a_ij \u2016v_j W_O^h\u2016 (attention weight times the norm of the value it moves, Kobayashi et al. "
    "2020)";

// The layers as the pictures show them: `in` itself, or under --map norm copies of its layers whose
// attention is the norm-based map (kept alive in `norm_layers`).
ReportInput pictured_layers(const ReportInput& in, PictureMap map, std::vector<LayerResult>& norm_layers) {
    if (map == PictureMap::weights) return in;
    ReportInput drawn = in;
    drawn.layers.clear();
    norm_layers.resize(in.layers.size());
    for (size_t l = 0; l < in.layers.size(); ++l) {
        norm_layers[l].visibility = in.layers[l]->visibility;
        norm_layers[l].attention = norm_based_map(*in.layers[l]);
        drawn.layers.push_back(&norm_layers[l]);
    }
    return drawn;
}

// The keys stats.json has beside the analysis: the tokens (the key tokens too when they differ)
// and in.extra_stats.
nlohmann::json report_extra_stats(const ReportInput& in) {
    nlohmann::json extra = {{"tokens", in.query_tokens}};
    if (in.key_tokens != in.query_tokens) extra["key_tokens"] = in.key_tokens;
    extra.update(in.extra_stats);
    return extra;
}

}  // namespace

ValueRange global_value_range(const ReportInput& in, int64_t heads) {
    const Visibility& vis = in.layers.front()->visibility;
    ValueRange global{1, 0};
    for (const LayerResult* r : in.layers)
        for (int64_t h = 0; h < heads; ++h) {
            const ValueRange v = visible_value_range(r->attention.ptr() + h * vis.queries * vis.keys, vis);
            global.vmin = std::min(global.vmin, v.vmin), global.vmax = std::max(global.vmax, v.vmax);
        }
    return global;
}

ReportOptions pictured_options(const ReportOptions& o) {
    ReportOptions drawn = o;
    if (o.map == PictureMap::norm) drawn.style.colorbar_label = norm_colorbar_label;
    return drawn;
}

const char* output_files_stage(const ReportOptions& o) { return o.pictures ? "pictures" : "statistics files"; }

ColorRangeRule color_rule(const ReportOptions& o) {
    ColorRangeRule rule(o.scale);
    rule.vmin = o.vmin, rule.vmax = o.vmax;
    return rule;
}

PictureNotes write_layer_pictures(OutputDir& out, const ReportInput& in, const ReportOptions& o, const ModelAnalysis& a,
                                  int threads, ValueRange& range, const std::function<void(const Tensor&)>& on_drawn) {
    std::vector<LayerResult> norm_layers;
    const ReportInput drawn = pictured_layers(in, o.map, norm_layers);
    range = global_value_range(drawn, a.num_heads);
    const PictureNotes drawn_notes =
        o.pictures ? write_head_pictures(out, drawn, pictured_options(o), a, range, threads) : PictureNotes{};
    for (const LayerResult* layer : drawn.layers) on_drawn(layer->attention);
    return drawn_notes;
}

PictureMap parse_picture_map(const std::string& text) {
    if (text == "weights") return PictureMap::weights;
    if (text == "norm") return PictureMap::norm;
    throw Error(ErrorKind::usage, fmt::format("map '{}': expected weights or norm", text));
}

nlohmann::json write_analysis_outputs(OutputDir& out, const std::string& folder, const ModelAnalysis& a,
                                      const nlohmann::json& extra, const ReportOptions& o) {
    nlohmann::json stats = stats_json(a);
    stats.update(extra);
    write_file_bytes(out.file(fmt::format("{}stats.json", folder)), json_file_text(stats, 2));
    write_file_bytes(out.file(fmt::format("{}heads.csv", folder)), heads_csv(a));
    write_file_bytes(out.file(fmt::format("{}pairs.csv", folder)), pairs_csv(a));
    if (!a.sparse.empty()) write_file_bytes(out.file(fmt::format("{}sparse.csv", folder)), sparse_csv(a));
    if (!o.pictures) return stats;

    std::vector<std::string> names;
    std::vector<double> entropy;
    for (int64_t n = 0; n < static_cast<int64_t>(a.head_ids.size()); ++n)
        names.push_back(matrix_head_label(a, n)), entropy.push_back(a.heads[static_cast<size_t>(n)].entropy);
    const int64_t layer_heads = a.num_layers > 1 ? a.num_heads : 0;  // lines between layers
    // Correlation is signed: a diverging colormap centred on 0. The picture shows the maps minus
    // uniform attention: under a causal mask every map's rows hold about 1/(i + 1) per key, which
    // alone correlates two unrelated maps (stats.json keeps the plain `correlation` too).
    const HeadMatrix& correlation = a.matrix(PairMetric::centred_correlation);
    const HeadMatrix& js_distance = a.matrix(PairMetric::js_distance);
    write_matrix_png(
        out.file(fmt::format("{}correlation.png", folder)), head_matrix_tensor(correlation), names,
        matrix_title("Correlation of attention maps minus uniform attention (a_ij - 1/visible keys)", correlation, a),
        diverging_colormap, -1.0f, 1.0f, "correlation beyond uniform", o.style.max_px, layer_heads);
    write_matrix_png(out.file(fmt::format("{}js_distance.png", folder)), head_matrix_tensor(js_distance), names,
                     matrix_title("Jensen-Shannon distance of attention maps", js_distance, a), o.style.colormap, 0.0f,
                     1.0f, "JS distance", o.style.max_px, layer_heads);
    write_bar_chart_png(out.file(fmt::format("{}entropy.png", folder)), entropy, names,
                        "Mean attention entropy per head", "entropy (nats)", o.style.max_px);
    write_dependence_pictures(out, folder, a, names, o);
    return stats;
}

void check_output_files(const std::vector<std::string>& paths, const std::vector<std::string>& inputs,
                        const std::string& out_dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path run_dir = fs::weakly_canonical(fs::absolute(out_dir, ec), ec);
    for (const std::string& path : paths) {
        if (path.empty()) continue;
        refuse_overwriting_inputs(path, inputs);
        const fs::path parent = fs::weakly_canonical(fs::absolute(path, ec), ec).parent_path();
        const auto [inside, rest] = std::mismatch(run_dir.begin(), run_dir.end(), parent.begin(), parent.end());
        if (!out_dir.empty() && inside == run_dir.end() && !fs::exists(out_dir, ec)) {
            const std::string why =
                ", which is only created when the run succeeds: write it elsewhere or create it first";
            throw Error(ErrorKind::usage, fmt::format("{}: is inside the output directory {}{}", path, out_dir, why));
        }
        check_file_destination(path);
    }
}

AnalysisOptions analysis_options(const ReportOptions& o, OnednnBackend& backend,
                                 const WeightSimilarities* weight_similarity) {
    AnalysisOptions options;
    options.backend = &backend;
    options.thresholds = o.thresholds;
    options.sparse_error = o.sparse_error;
    options.on_sparse_layer = o.on_sparse_layer;
    options.threads = resolve_threads(o.threads);
    options.weight_similarity = weight_similarity;
    return options;
}

ModelAnalysis analyze_report(const ReportInput& in, const ReportOptions& o) {
    if (!in.backend) throw Error(ErrorKind::internal, "analyze_report: no backend");
    return analyze_model(in.layers, in.weights, in.token_ids, analysis_options(o, *in.backend, in.weight_similarity),
                         in.token_roles);
}

nlohmann::json report_stats(const ReportInput& in, const ModelAnalysis& analysis) {
    nlohmann::json stats = stats_json(numbered_analysis(analysis, in));
    stats.update(report_extra_stats(in));
    return stats;
}

std::optional<ValueRange> head_png_range(const ReportInput& in, const ReportOptions& o, const ModelAnalysis& a) {
    if (o.scale == ScaleMode::head) return std::nullopt;
    std::vector<LayerResult> norm_layers;
    return global_value_range(pictured_layers(in, o.map, norm_layers), a.num_heads);
}

std::vector<uint8_t> head_png(const ReportInput& in, const ReportOptions& o, const ModelAnalysis& a, const HeadId& id,
                              const std::optional<ValueRange>& range) {
    check_drawn_head(id, a, in, "head");
    if (o.scale == ScaleMode::global && !range)
        throw Error(ErrorKind::internal, "head_png: a shared color range needs head_png_range's range");
    const int64_t n = id.layer * a.num_heads + id.head;
    const Visibility& vis = in.layers.front()->visibility;
    Tensor norm_map;  // --map norm: the head's layer only
    const float* weights = head_weights(in, a, n);
    if (o.map == PictureMap::norm) {
        norm_map = norm_based_map(*in.layers[static_cast<size_t>(id.layer)]);
        weights = norm_map.ptr() + id.head * vis.queries * vis.keys;
    }
    const HeatmapStyle style = head_style(in, pictured_options(o), a, n, weights, range.value_or(ValueRange{1, 0}));
    const HeatmapLayout layout = layout_heatmap(weights, vis, in.query_tokens, in.key_tokens, style);
    return encode_png(render_heatmap(layout, style));
}

HtmlReportInput report_page(const nlohmann::json& stats, const ReportOptions& o, const HeatmapStyle& shared_style) {
    HtmlReportInput html;
    html.stats = stats;
    html.column_order = report_column_order();
    html.table_notes = report_table_notes(stats);
    html.analysis_sections = model_analyses_html(stats);
    html.style = shared_style;
    html.scale = o.scale;
    if (o.map == PictureMap::norm) html.map_kind = norm_map_kind, html.value_name = "norm";
    return html;
}

void write_map_pictures(OutputDir& out, const ReportInput& in, const ReportOptions& o, const ModelAnalysis& analysis,
                        const nlohmann::json& stats, PictureNotes* notes, const std::vector<HtmlMaps>& more_maps) {
    const int threads = resolve_threads(o.threads);
    std::vector<LayerResult> norm_layers;
    const ReportInput drawn = pictured_layers(in, o.map, norm_layers);
    const ReportOptions drawn_options = pictured_options(o);
    const ValueRange all = global_value_range(drawn, analysis.num_heads);
    if (o.pictures) {
        const PictureNotes drawn_notes = write_head_pictures(out, drawn, drawn_options, analysis, all, threads);
        if (notes) notes->maps += drawn_notes.maps, notes->dark_maps += drawn_notes.dark_maps;
    }
    // The overview and report.html show the layers with a selected head (every layer by default).
    std::vector<const Tensor*> maps;
    std::vector<int64_t> numbers;
    std::vector<std::vector<int64_t>> heads;
    std::vector<std::string> labels;
    for (size_t l = 0; l < drawn.layers.size(); ++l) {
        const int64_t number = layer_number(in, static_cast<int64_t>(l));
        if (!o.drawn.has_layer(number)) continue;
        maps.push_back(&drawn.layers[l]->attention);
        numbers.push_back(number);
        heads.push_back(o.drawn.heads_of(number, analysis.num_heads));
        for (int64_t h = 0; h < analysis.num_heads; ++h)
            labels.push_back(shown_label(analysis, static_cast<int64_t>(l) * analysis.num_heads + h));
    }
    // The overview and report.html take the shared range (--scale global) from the style.
    HeatmapStyle shared_style = drawn_options.style;
    const ValueRange shared = map_color_range(color_rule(o), all, all);
    shared_style.vmin = shared.vmin, shared_style.vmax = shared.vmax;
    if (o.pictures)
        write_overview_png(out.file(fmt::format("{}overview.png", in.folder)), maps, numbers,
                           in.layers.front()->visibility, shared_style, color_rule(o), threads, labels);
    if (o.html && o.pictures) {
        HtmlReportInput html = report_page(stats, o, shared_style);
        html.query_tokens = in.query_tokens, html.key_tokens = in.key_tokens;
        html.layers = maps, html.layer_numbers = numbers;
        if (!o.drawn.all()) html.head_numbers = heads;
        html.visibility = in.layers.front()->visibility;
        html.model = in.model_description;
        html.input_text = in.input_text;
        html.more_maps = more_maps;
        if (!more_maps.empty()) html.name = "attention";  // a page of several sets names each
        write_html_report(out.file(fmt::format("{}report.html", in.folder)), html);
    }
}

ModelAnalysis write_report(OutputDir& out, const ReportInput& in, const ReportOptions& o, Timings& timings,
                           PictureNotes* notes) {
    // Step 1: every statistic, label and head-by-head matrix.
    ModelAnalysis analysis;
    {
        Timings::Scope t(timings, "statistics");
        analysis = analyze_report(in, o);
    }
    const ModelAnalysis named = numbered_analysis(analysis, in);
    const nlohmann::json extra = report_extra_stats(in);
    // Step 2: files and pictures.
    {
        Timings::Scope t(timings, output_files_stage(o));
        const nlohmann::json stats = write_analysis_outputs(out, in.folder, named, extra, o);
        write_map_pictures(out, in, o, analysis, stats, notes);
    }
    // Step 3: raw arrays for scripts.
    {
        Timings::Scope t(timings, "dumps");
        if (!o.dump_attention.empty())
            write_npy(out.external_file(o.dump_attention), stacked_attention(in.layers, in.layer_folders));
        if (!o.dump_output.empty()) write_npy(out.external_file(o.dump_output), in.layers.back()->output);
    }
    return named;
}

}  // namespace attn_viz
