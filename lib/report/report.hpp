// Turns computed layers into a run directory: statistics (stats.json, heads.csv, pairs.csv),
// per-head heatmaps, overview figures, the HTML report and dumps. Shared by `attn-viz run`
// (one layer) and `attn-viz model` (every layer, pictures in layer_NN/ folders).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "color_range.hpp"
#include "head_analysis.hpp"
#include "head_selection.hpp"
#include "heatmap_grid.hpp"
#include "heatmap_layout.hpp"
#include "html_report.hpp"
#include "layer_result.hpp"
#include "output_dir.hpp"
#include "timings.hpp"

namespace attn_viz {

// What the attention pictures show: the softmax weights a_ij, or the norm-based map
// a_ij ||v_j W_O^h|| (norm_attention.hpp; the layers need value_norms). Statistics always read the weights.
enum class PictureMap { weights, norm };
PictureMap parse_picture_map(const std::string& text);  // "weights" or "norm"; Error(usage) otherwise

struct ReportOptions {
    std::string dump_attention;  // .npy path or "": [H, T, S] for `run`, [L, H, T, S] for a model (one layer too)
    std::string dump_output;     // .npy path or "": the last layer's output [T, D]
    int threads = 0;             // PNG encoding and statistics threads (0 = all cores)
    HeatmapStyle style;          // colormap, log scale, pixel budget, pooling, window, labels
    ScaleMode scale = ScaleMode::global;
    std::optional<float> vmin, vmax;  // fixed ends of every map's color range (map_color_range)
    PictureMap map = PictureMap::weights;
    bool html = false;          // report.html
    bool pictures = true;       // false: the statistics files only (no PNG, SVG or HTML)
    std::optional<HeadId> svg;  // the head to also draw as SVG (Error usage when out of range)
    HeadSelection drawn;  // heads (by layer number) with pictures, overview rows and report maps; statistics cover all
    LabelThresholds thresholds;
    bool sparse_error = false;  // the sparse-attention error per head (AnalysisOptions::sparse_error)
    std::function<void(int64_t done, int64_t total)> on_sparse_layer;  // AnalysisOptions::on_sparse_layer (progress)
};

struct ReportInput {
    OnednnBackend* backend = nullptr;                       // the caller's, for the analysis's products (required)
    std::vector<const LayerResult*> layers;                 // one for `run`, L for `model`
    std::vector<const LayerWeights*> weights;               // the same layers' weights (output/weight similarities)
    std::vector<std::string> query_tokens;                  // T labels
    std::vector<std::string> key_tokens;                    // S labels (== query tokens for self-attention)
    bool layer_folders = false;                             // layer_00/head_00.png instead of head_00.png
    std::string folder;                                     // "" or "seq_01/": where in the run directory
    std::vector<int64_t> token_ids = {};                    // for duplicate-token / induction scores, or empty
    std::vector<TokenRole> token_roles = {};                // T roles for the special-token masses, or empty
    const WeightSimilarities* weight_similarity = nullptr;  // of `weights`, computed once per run
    nlohmann::json extra_stats = nlohmann::json::object();  // more stats.json keys (ablation, rollout, provenance)
    std::vector<int64_t> layer_numbers =
        {};  // what picture titles, layer folders and overview rows call the layers; empty = 0, 1, ...
    std::string model_description = {};  // report.html's "Model": "path (llama, 5 layers x 8 heads)", or ""
    std::string input_text = {};         // report.html's "Input": the text run, or "" (the page shows the first tokens)
};

// What a run's pictures look like, for hints on stdout.
struct PictureNotes {
    int64_t maps = 0;       // heads drawn (those of ReportOptions::drawn)
    int64_t dark_maps = 0;  // of them, mostly dark on a linear scale (mostly_dark)
};

// Writes every output into `out` (staged; the caller commits) and returns the analysis; `notes`
// (if given) gets what the pictures look like.
ModelAnalysis write_report(OutputDir& out, const ReportInput& input, const ReportOptions& options, Timings& timings,
                           PictureNotes* notes = nullptr);

// The analysis options of `options` (thresholds, sparse error and its progress, threads), on the
// caller's backend, with the run's weight similarities (computed once per run) when given.
AnalysisOptions analysis_options(const ReportOptions& options, OnednnBackend& backend,
                                 const WeightSimilarities* weight_similarity = nullptr);

// Step 1 of write_report: every statistic, label and head-by-head matrix of in's layers (heads
// indexed by their place in in.layers), as `options` ask (thresholds, sparse error, threads).
ModelAnalysis analyze_report(const ReportInput& in, const ReportOptions& options);

// The stats.json document write_report writes for `analysis` (analyze_report of `in`): heads named
// by in.layer_numbers, the tokens and in.extra_stats merged in.
nlohmann::json report_stats(const ReportInput& in, const ModelAnalysis& analysis);

// The shared color range head_png draws with: under --scale global, global_value_range of in's
// pictured maps (--map norm: the norm-based maps); none under --scale head (each head's own). Made
// once per input, so that one head_png costs one head.
std::optional<ValueRange> head_png_range(const ReportInput& in, const ReportOptions& options,
                                         const ModelAnalysis& analysis);

// Head `id` (its layer an index into in.layers) drawn as write_report draws its head_NN.png (title,
// color range `range` from head_png_range, --map norm), as PNG bytes. Error(usage) when it is not a
// head of `in`.
std::vector<uint8_t> head_png(const ReportInput& in, const ReportOptions& options, const ModelAnalysis& analysis,
                              const HeadId& id, const std::optional<ValueRange>& range);

// The --timings stage that writes the statistics files and the pictures, named by what it does:
// "pictures", or "statistics files" under --stats-only (options.pictures false).
const char* output_files_stage(const ReportOptions& options);

// The options the pictures are drawn with: under --map norm, the colorbar says so.
ReportOptions pictured_options(const ReportOptions& options);

// The extremes of the visible weights of in.layers' first `heads` heads, from which
// map_color_range takes the shared range (--scale global).
ValueRange global_value_range(const ReportInput& in, int64_t heads);

// The color rule of the options' --scale, --vmin and --vmax.
ColorRangeRule color_rule(const ReportOptions& options);

// The per-head pictures of in.layers (analysis `a` of them) as write_report draws them (--map
// norm; the SVG of options.svg, a head of `a`), the shared color range (--scale global) over these
// layers' heads only, which `range` gets. `on_drawn` is told each layer's maps as drawn ([H, T, S]:
// the weights or the norm-based map), e.g. for overview tiles. Returns how many maps were drawn
// (options.drawn) and how many of them are mostly dark. For reports written layer by layer (layer_stream.hpp).
PictureNotes write_layer_pictures(OutputDir& out, const ReportInput& in, const ReportOptions& options,
                                  const ModelAnalysis& a, int threads, ValueRange& range,
                                  const std::function<void(const Tensor&)>& on_drawn);

// report.html's page for `stats` (tables, notes, the analyses' sections), its maps drawn with
// `shared_style` under --scale and --map; the caller adds the maps.
HtmlReportInput report_page(const nlohmann::json& stats, const ReportOptions& options,
                            const HeatmapStyle& shared_style);

// The pictures of in's maps as write_report draws them (every selected head's PNG, the SVG,
// overview.png) and, with --html, report.html showing them with `stats` (analysis `a` of them:
// titles, labels) and `more_maps` after them. `notes` (if given) gets what the pictures look like.
void write_map_pictures(OutputDir& out, const ReportInput& in, const ReportOptions& options, const ModelAnalysis& a,
                        const nlohmann::json& stats, PictureNotes* notes, const std::vector<HtmlMaps>& more_maps = {});

// The outputs that need only the analysis, not the maps: stats.json (with `extra` keys merged in),
// heads.csv, pairs.csv, correlation.png, js_distance.png and entropy.png, under `folder`.
// Used by write_report, by corpus runs and by `attn-viz merge`. Returns the stats.json document.
nlohmann::json write_analysis_outputs(OutputDir& out, const std::string& folder, const ModelAnalysis& analysis,
                                      const nlohmann::json& extra, const ReportOptions& options);

// Checks every file a run will write outside its directory (dumps, --save-partial; "" = none)
// before any work: none may be an input (refuse_overwriting_inputs), each must be creatable
// (check_file_destination), and none may lie inside `out_dir` while that does not exist yet (it
// only appears when the run succeeds). Throws Error(usage or io) naming the file.
void check_output_files(const std::vector<std::string>& paths, const std::vector<std::string>& inputs,
                        const std::string& out_dir);

// The layers' attention maps [H, T, S] gathered into [L, H, T, S] (what --dump-attention writes);
// [H, T, S] for `run`'s one layer (with_layer_axis false). A model's dump keeps the layer axis
// even when the model has one layer.
Tensor stacked_attention(const std::vector<const LayerResult*>& layers, bool with_layer_axis);

}  // namespace attn_viz
