#include "layer_stream.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "error.hpp"
#include "findings.hpp"
#include "head_names.hpp"
#include "parallel_for.hpp"
#include "png_writer.hpp"

namespace attn_viz {

ModelAnalysis join_layer_analyses(const std::vector<ModelAnalysis>& layers, const LabelThresholds& thresholds) {
    if (layers.empty()) throw Error(ErrorKind::internal, "join_layer_analyses: no layers");
    const ModelAnalysis& first = layers.front();
    ModelAnalysis a;
    a.num_layers = static_cast<int64_t>(layers.size());
    a.num_heads = first.num_heads;
    a.num_queries = first.num_queries, a.num_keys = first.num_keys;
    a.causal = first.causal;
    a.total_queries = first.total_queries;
    const int64_t H = a.num_heads, N = a.num_layers * H;
    for (HeadMatrix& m : a.matrices) m = HeadMatrix(N);
    for (int64_t l = 0; l < a.num_layers; ++l) {
        const ModelAnalysis& layer = layers[static_cast<size_t>(l)];
        const bool square =
            std::all_of(layer.matrices.begin(), layer.matrices.end(), [&](const HeadMatrix& m) { return m.size == H; });
        if (layer.num_layers != 1 || layer.num_heads != H || !square || static_cast<int64_t>(layer.heads.size()) != H)
            throw Error(ErrorKind::internal,
                        fmt::format("join_layer_analyses: layer {} is not one layer of {} heads", l, H));
        for (int64_t h = 0; h < H; ++h) a.head_ids.push_back({l, h});
        a.heads.insert(a.heads.end(), layer.heads.begin(), layer.heads.end());
        a.sparse.insert(a.sparse.end(), layer.sparse.begin(), layer.sparse.end());
        for (size_t m = 0; m < a.matrices.size(); ++m)
            for (int64_t i = 0; i < H; ++i)
                for (int64_t j = 0; j < H; ++j) a.matrices[m].at(l * H + i, l * H + j) = layer.matrices[m].at(i, j);
    }
    derive_labels_and_redundancy(a, thresholds);
    return a;
}

LayerStream::LayerStream(OutputDir& out, LayerStreamInput input, const ReportOptions& options, Timings& timings)
    : out_(out),
      input_(std::move(input)),
      options_(options),
      timings_(timings),
      threads_(resolve_threads(options.threads)) {
    if (!input_.backend) throw Error(ErrorKind::internal, "LayerStream: no backend");
    if (options_.html)
        throw Error(ErrorKind::internal, "LayerStream: the HTML report needs every layer's maps at once");
    if (options_.svg && (options_.svg->layer < 0 || options_.svg->layer >= input_.num_layers ||
                         options_.svg->head < 0 || options_.svg->head >= input_.num_heads))
        throw Error(ErrorKind::usage, fmt::format("svg head {} is out of range: the model has {} layers of {} heads",
                                                  head_name(options_.svg->layer, options_.svg->head), input_.num_layers,
                                                  input_.num_heads));
    const std::vector<int64_t> numbers = overview_layers();
    tiles_ = overview_tiles(numbers, static_cast<int>(numbers.size()), static_cast<int>(input_.num_heads),
                            options_.style, true);
    const int64_t T = static_cast<int64_t>(input_.tokens.size()), K = static_cast<int64_t>(key_tokens().size());
    if (!options_.dump_attention.empty())
        dump_.emplace(out_.external_file(options_.dump_attention),
                      std::vector<int64_t>{input_.num_layers, input_.num_heads, T, K});
}

std::vector<int64_t> LayerStream::overview_layers() const {
    std::vector<int64_t> numbers;
    for (int64_t l = 0; l < input_.num_layers; ++l)
        if (options_.drawn.has_layer(l)) numbers.push_back(l);
    return numbers;
}

void LayerStream::add_layer(int64_t layer, const LayerResult& result, const LayerWeights& weights) {
    if (layer != static_cast<int64_t>(layers_.size()) || layer >= input_.num_layers)
        throw Error(ErrorKind::internal, fmt::format("LayerStream: layer {} out of order", layer));
    // Step 1: the layer's statistics, its pair matrices and weight similarities within the layer.
    {
        Timings::Scope t(timings_, "statistics");
        AnalysisOptions analysis = analysis_options(options_, *input_.backend);
        analysis.on_sparse_layer = nullptr;  // one layer per analysis: the caller shows the layers done
        layers_.push_back(analyze_model({&result}, {&weights}, input_.token_ids, analysis, input_.token_roles));
    }
    // Step 2: its pictures, named and titled by the layer's number, and its overview tiles.
    if (options_.pictures) {
        Timings::Scope t(timings_, "pictures");
        ReportInput in;
        in.layers = {&result};
        in.query_tokens = input_.tokens;
        in.key_tokens = key_tokens();
        in.layer_folders = true;
        in.folder = input_.folder;
        in.layer_numbers = {layer};
        in.token_ids = input_.token_ids;
        ReportOptions o = options_;
        o.svg.reset();
        if (options_.svg && options_.svg->layer == layer) o.svg = HeadId{0, options_.svg->head};
        ValueRange range;
        const PictureNotes drawn =
            write_layer_pictures(out_, in, o, layers_.back(), threads_, range, [&](const Tensor& maps) {
                if (options_.drawn.has_layer(layer))
                    add_overview_layer(tiles_, maps, result.visibility, options_.style, threads_);
            });
        drawn_.maps += drawn.maps, drawn_.dark_maps += drawn.dark_maps;
        range_.vmin = std::min(range_.vmin, range.vmin), range_.vmax = std::max(range_.vmax, range.vmax);
    }
    // Step 3: its slice of the attention dump; the last layer's output.
    Timings::Scope t(timings_, "dumps");
    if (dump_) dump_->append(result.attention.ptr(), result.attention.size());
    if (!options_.dump_output.empty() && layer + 1 == input_.num_layers)
        write_npy(out_.external_file(options_.dump_output), result.output);
}

ModelAnalysis LayerStream::finish(PictureNotes& notes) {
    if (static_cast<int64_t>(layers_.size()) != input_.num_layers)
        throw Error(ErrorKind::internal,
                    fmt::format("LayerStream: {} layers of {} done", layers_.size(), input_.num_layers));
    ModelAnalysis analysis;
    {
        Timings::Scope t(timings_, "statistics");
        analysis = join_layer_analyses(layers_, options_.thresholds);
    }
    Timings::Scope t(timings_, output_files_stage(options_));
    nlohmann::json extra = {{"tokens", input_.tokens}, {"pair_scope", "layer"}};
    if (key_tokens() != input_.tokens) extra["key_tokens"] = key_tokens();
    extra.update(input_.extra_stats);
    write_analysis_outputs(out_, input_.folder, analysis, extra, options_);
    if (options_.pictures) {
        notes.maps += drawn_.maps, notes.dark_maps += drawn_.dark_maps;
        const std::vector<int64_t> numbers = overview_layers();
        std::vector<std::string> labels;
        for (int64_t l : numbers)
            for (int64_t h = 0; h < analysis.num_heads; ++h)
                labels.push_back(shown_label(analysis, l * analysis.num_heads + h));
        HeatmapStyle shared_style = pictured_options(options_).style;
        const ValueRange shared = map_color_range(color_rule(options_), range_, range_);
        shared_style.vmin = shared.vmin, shared_style.vmax = shared.vmax;
        write_png(out_.file(fmt::format("{}overview.png", input_.folder)),
                  render_overview_tiles(tiles_, numbers, shared_style, color_rule(options_), nullptr, labels));
    }
    if (dump_) dump_->close();
    return analysis;
}

}  // namespace attn_viz
