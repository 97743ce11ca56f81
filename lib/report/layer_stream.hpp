// A model's report written layer by layer (attn-viz model --stream-layers): as soon as a layer's
// attention is done, its heads' statistics and within-layer pair matrices are computed, its
// pictures and its slice of the attention dump written, and only the statistics and small overview
// tiles are kept, so memory holds one layer's maps however many layers the model has.
// Differences from write_report (documented in docs/streaming.md): pair matrices cover pairs within
// a layer only (other entries null; stats.json "pair_scope": "layer"), the per-head pictures'
// shared color range (--scale global) is each layer's own, and report.html is not written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "figure_overview.hpp"
#include "npy.hpp"
#include "report.hpp"

namespace attn_viz {

struct LayerStreamInput {
    int64_t num_layers = 0;  // L layers of num_heads heads each
    int64_t num_heads = 0;
    std::vector<std::string> tokens;  // T labels of the queries (and of the keys, without key_tokens)
    std::vector<int64_t> token_ids;   // for duplicate-token / induction scores, or empty
    nlohmann::json extra_stats = nlohmann::json::object();  // more stats.json keys (provenance, ...)
    std::vector<std::string> key_tokens = {};  // K labels of the keys when they differ (cross attention), or empty
    std::string folder = {};                   // "" or "encoder/": where in the run directory
    OnednnBackend* backend = nullptr;          // the caller's, for the analysis's products (required)
    std::vector<TokenRole> token_roles = {};   // T roles for the special-token masses, or empty
};

class LayerStream {
public:
    // Checks the options a streamed report can honour (no HTML report: Error internal; an SVG head
    // out of range: Error usage) and opens the attention dump ([L, H, T, K], staged in `out`) when asked.
    LayerStream(OutputDir& out, LayerStreamInput input, const ReportOptions& options, Timings& timings);

    // result: layer `layer`'s attention ([H, T, K]; layers come in order 0, 1, ...); weights: its
    // attention weights (the layer's weight similarities). Writes the layer's pictures and dump
    // slice and keeps its statistics; neither `result` nor `weights` is kept.
    void add_layer(int64_t layer, const LayerResult& result, const LayerWeights& weights);

    // After the last layer: stats.json, heads.csv, pairs.csv, the matrix pictures, overview.png (under input.folder)
    // (rows: the layers options.drawn selects; its shared range over every layer) and the closed dump. Returns the
    // whole analysis; `notes` gets what the pictures look like.
    ModelAnalysis finish(PictureNotes& notes);

private:
    std::vector<int64_t> overview_layers() const;  // the overview's rows: the layers with a selected head
    const std::vector<std::string>& key_tokens() const {
        return input_.key_tokens.empty() ? input_.tokens : input_.key_tokens;
    }

    OutputDir& out_;
    LayerStreamInput input_;
    ReportOptions options_;
    Timings& timings_;
    int threads_;
    std::vector<ModelAnalysis> layers_;  // one per layer done: its heads and within-layer matrices
    OverviewTiles tiles_;
    ValueRange range_{1, 0};  // extremes of every drawn map so far
    PictureNotes drawn_;      // maps drawn so far (the selected heads), and the dark ones
    std::optional<NpyWriter> dump_;
};

// The analysis of a model whose layers were analysed one by one (analyze_model of one layer
// each): heads in order, each matrix block-diagonal (pairs in different layers NaN), labels and
// redundancy derived again over all heads.
ModelAnalysis join_layer_analyses(const std::vector<ModelAnalysis>& layers, const LabelThresholds& thresholds);

}  // namespace attn_viz
