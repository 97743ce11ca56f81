#include "rollout_report.hpp"

#include <cstdio>

#include "attention_rollout.hpp"
#include "heatmap.hpp"
#include "npy.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

// maps: [L, T, T]. Writes NAME.npy and, with o.pictures, NAME/layer_NN.png; returns the stats.json
// entry: the files and each layer's last row (what the last position draws on).
nlohmann::json write_layer_maps(OutputDir& out, const std::string& name, const Tensor& maps, const std::string& title,
                                const Visibility& visibility, const std::vector<std::string>& tokens, const ReportOptions& o) {
    const int64_t L = maps.dim(0), T = maps.dim(1);
    write_npy(out.file(name + ".npy"), maps);
    nlohmann::json last_rows = nlohmann::json::array();
    for (int64_t l = 0; l < L; ++l) {
        const float* map = maps.ptr() + l * T * T;
        nlohmann::json row = nlohmann::json::array();
        for (int64_t j = 0; j < T; ++j) row.push_back(json_number(map[(T - 1) * T + j]));
        last_rows.push_back(std::move(row));
        if (!o.pictures) continue;
        char file[64];
        std::snprintf(file, sizeof file, "%s/layer_%02lld.png", name.c_str(), static_cast<long long>(l));
        HeatmapStyle style = o.style;
        const ValueRange range = visible_value_range(map, visibility);
        style.vmin = range.vmin, style.vmax = range.vmax;
        style.title = title + " after layer " + std::to_string(l);
        style.row_axis_label = "position", style.column_axis_label = "input token";
        style.colorbar_label = name;
        write_head_png(out.file(file), map, visibility, tokens, tokens, style);
    }
    nlohmann::json entry = {{"file", name + ".npy"}, {"shape", maps.shape}, {"last_row", last_rows}};
    if (o.pictures) entry["pictures"] = name + "/layer_NN.png";
    return entry;
}

}  // namespace

nlohmann::json write_rollout_outputs(OutputDir& out, const std::vector<const LayerResult*>& layers,
                                     const std::vector<std::string>& tokens, const ReportOptions& o, bool with_rollout,
                                     bool with_flow) {
    std::vector<const Tensor*> maps;
    for (const LayerResult* layer : layers) maps.push_back(&layer->attention);
    const Visibility& visibility = layers.front()->visibility;
    nlohmann::json stats = nlohmann::json::object();
    if (with_rollout)
        stats["attention_rollout"] = write_layer_maps(out, "rollout", attention_rollout(maps), "Attention rollout", visibility, tokens, o);
    if (with_flow)
        stats["attention_flow"] = write_layer_maps(out, "flow", attention_flow(maps), "Attention flow", visibility, tokens, o);
    return stats;
}

}  // namespace attn_viz
