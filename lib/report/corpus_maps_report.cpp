#include "corpus_maps_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "head_names.hpp"
#include "heatmap.hpp"
#include "html_report.hpp"

namespace attn_viz {
namespace {

// "-2", "0", "+3": an offset as the pictures label it.
std::string offset_label(int64_t d) { return d == 0 ? "0" : fmt::format("{:+}", d); }

std::vector<std::string> offset_labels(const CorpusMeanMaps& maps) {
    std::vector<std::string> labels;
    for (int64_t d = maps.min_offset(); d <= maps.max_offset(); ++d) labels.push_back(offset_label(d));
    return labels;
}

// A map of `queries` x `keys` cells of one sequence's positions (causal) or of other axes.
Visibility cells(int64_t queries, int64_t keys, bool causal, bool shared_positions) {
    Visibility vis;
    vis.queries = queries, vis.keys = keys, vis.causal = causal, vis.shared_positions = shared_positions;
    return vis;
}

std::vector<std::string> position_labels(int64_t T) {
    std::vector<std::string> labels;
    for (int64_t i = 0; i < T; ++i) labels.push_back(fmt::format("{}", i));
    return labels;
}

int64_t offset_count(const CorpusMeanMaps& maps) { return maps.max_offset() - maps.min_offset() + 1; }

// The offset profile as float maps: [L * H, K].
std::vector<float> profile_floats(const CorpusMeanMaps& maps) {
    const std::vector<double> profile = maps.offset_profile();
    return {profile.begin(), profile.end()};
}

// The style the offsets are drawn with: the color range of --scale, --vmin and --vmax over them.
HeatmapStyle offsets_style(const std::vector<float>& profile, const ReportOptions& o) {
    HeatmapStyle style = o.style;
    const auto [low, high] = std::minmax_element(profile.begin(), profile.end());
    const ValueRange range = map_color_range(color_rule(o), {*low, *high}, {*low, *high});
    style.vmin = range.vmin, style.vmax = range.vmax;
    return style;
}

// offsets.png: one row per head (L0H0, L0H1, ...), one column per offset.
void write_offsets_png(OutputDir& out, const CorpusMeanMaps& maps, const std::vector<float>& profile,
                       const ReportOptions& o) {
    const int64_t N = maps.num_layers() * maps.num_heads();
    std::vector<std::string> heads;
    for (int64_t n = 0; n < N; ++n) heads.push_back(head_name(n / maps.num_heads(), n % maps.num_heads()));
    const Visibility vis = cells(N, offset_count(maps), false, false);
    HeatmapStyle style = offsets_style(profile, o);
    style.title = fmt::format("Mean attention by offset d = query - key, {} sequences", maps.num_sequences());
    style.raw_labels = true;
    style.row_axis_label = "head", style.column_axis_label = "offset (query - key)";
    style.colorbar_label = "mean weight at the offset";
    write_head_png(out.file("offsets.png"), profile.data(), vis, heads, offset_labels(maps), style);
}

// report.html's set of the offsets: each head one row ("every query") over the offsets, one
// [H, 1, K] map per layer, kept alive in `layers`.
HtmlMaps offsets_set(const CorpusMeanMaps& maps, const std::vector<float>& profile, std::vector<Tensor>& layers) {
    const int64_t H = maps.num_heads(), K = offset_count(maps);
    HtmlMaps set;
    set.name = "offsets";
    set.heading =
        "Attention by relative offset: each head's mean weight at offset d = query - key over every query "
        "of every sequence";
    set.query_tokens = {"mean"};  // the one row: the mean over every query
    set.key_tokens = offset_labels(maps);
    set.visibility = cells(1, K, false, false);
    layers.assign(static_cast<size_t>(maps.num_layers()), Tensor({H, 1, K}));
    for (int64_t l = 0; l < maps.num_layers(); ++l) {
        std::copy_n(profile.begin() + l * H * K, H * K, layers[static_cast<size_t>(l)].data.begin());
        set.layers.push_back(&layers[static_cast<size_t>(l)]);
    }
    return set;
}

// The page's copy of stats.json: each head's spread over the sequences as "<statistic>_std"
// columns beside the means (stats.json nests it under "std", which a table leaves out).
nlohmann::json with_spread_columns(nlohmann::json stats) {
    for (nlohmann::json& head : stats["heads"])
        if (head.contains("std")) {
            for (const auto& [name, value] : head["std"].items()) head[name + "_std"] = value;
            head.erase("std");
        }
    return stats;
}

}  // namespace

nlohmann::json mean_maps_json(const CorpusMeanMaps& maps) {
    const std::vector<double> profile = maps.offset_profile();
    const int64_t K = offset_count(maps);
    nlohmann::json offsets = nlohmann::json::array(), rows = nlohmann::json::array();
    for (int64_t d = maps.min_offset(); d <= maps.max_offset(); ++d) offsets.push_back(d);
    for (size_t n = 0; n < profile.size() / static_cast<size_t>(K); ++n)
        rows.push_back(std::vector<double>(profile.begin() + n * K, profile.begin() + (n + 1) * K));
    return {{"sequences", maps.num_sequences()},
            {"aligned", maps.aligned()},
            {"aligned_length", maps.aligned() ? nlohmann::json(maps.aligned_length()) : nlohmann::json(nullptr)},
            {"max_length", maps.max_length()},
            {"offsets", std::move(offsets)},
            {"by_offset", std::move(rows)}};
}

void write_corpus_map_pictures(OutputDir& out, const CorpusMeanMaps& maps, const ModelAnalysis& a,
                               const nlohmann::json& stats, const ReportOptions& o) {
    if (!o.pictures) return;
    const std::vector<float> profile = profile_floats(maps);
    write_offsets_png(out, maps, profile, o);
    std::vector<Tensor> offset_layers;
    HtmlMaps offsets = offsets_set(maps, profile, offset_layers);
    const nlohmann::json page_stats = with_spread_columns(stats);
    if (!maps.aligned()) {
        if (!o.html) return;
        HtmlReportInput html = report_page(page_stats, o, offsets_style(profile, o));
        static_cast<HtmlMaps&>(html) = std::move(offsets);
        html.input_text = fmt::format("{} sequences of up to {} tokens", maps.num_sequences(), maps.max_length());
        write_html_report(out.file("report.html"), html);
        return;
    }
    // Aligned: each layer's mean maps [H, T, T] drawn as one input's, positions for tokens.
    const int64_t H = maps.num_heads(), T = maps.aligned_length();
    const Tensor mean = maps.aligned_mean();
    std::vector<LayerResult> layers(static_cast<size_t>(maps.num_layers()));
    ReportInput in;
    for (int64_t l = 0; l < maps.num_layers(); ++l) {
        LayerResult& r = layers[static_cast<size_t>(l)];
        r.visibility = cells(T, T, maps.causal(), true);
        r.attention = Tensor({H, T, T});
        std::copy_n(mean.data.begin() + l * H * T * T, H * T * T, r.attention.data.begin());
        in.layers.push_back(&r);
    }
    in.query_tokens = in.key_tokens = position_labels(T);
    in.layer_folders = maps.layer_folders();
    in.input_text =
        fmt::format("the mean maps of {} sequences of {} tokens (positions for tokens)", maps.num_sequences(), T);
    write_map_pictures(out, in, o, a, page_stats, nullptr, {std::move(offsets)});
}

}  // namespace attn_viz
