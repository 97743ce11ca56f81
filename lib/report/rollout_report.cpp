#include "rollout_report.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attention_rollout.hpp"
#include "heatmap.hpp"
#include "npy.hpp"
#include "stats_report.hpp"

namespace attn_viz {
namespace {

// "position 3 ("cat")".
std::string position_text(int64_t j, const std::vector<std::string>& tokens) {
    return fmt::format(
        "position {}{}", j,
        j < static_cast<int64_t>(tokens.size()) ? fmt::format(" (\"{}\")", tokens[static_cast<size_t>(j)]) : "");
}

// What the last position draws on after the last layer: its two largest entries, and the first
// token's share (where rollout and flow of causal models tend to pile up). row: [T] the last row
// of the last layer's map.
std::string last_position_finding(const std::string& name, const float* row, int64_t L, int64_t T,
                                  const std::vector<std::string>& tokens) {
    std::vector<int64_t> order(static_cast<size_t>(T));
    for (int64_t j = 0; j < T; ++j) order[static_cast<size_t>(j)] = j;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    double total = 0;
    for (int64_t j = 0; j < T; ++j) total += row[j];
    const auto share = [&](int64_t j) { return fmt::format("{:.2f}", row[j]); };
    std::string sentence = fmt::format("{}: after the last layer ({}), the last {} draws most on {} ({})", name, L - 1,
                                       position_text(T - 1, tokens), position_text(order[0], tokens), share(order[0]));
    if (T > 1) sentence += fmt::format(", then {} ({})", position_text(order[1], tokens), share(order[1]));
    return fmt::format("{}; the first token holds {:.2f} of the total", sentence, total > 0 ? row[0] / total : 0.0);
}

// maps: [L, T, T]. Writes NAME.npy and, with o.pictures, NAME/layer_NN.png; returns the stats.json
// entry: the files, each layer's last row (what the last position draws on) and the finding.
nlohmann::json write_layer_maps(OutputDir& out, const std::string& name, const Tensor& maps, const std::string& title,
                                const Visibility& visibility, const std::vector<std::string>& tokens,
                                const ReportOptions& o) {
    const int64_t L = maps.dim(0), T = maps.dim(1);
    write_npy(out.file(fmt::format("{}.npy", name)), maps);
    nlohmann::json last_rows = nlohmann::json::array();
    for (int64_t l = 0; l < L; ++l) {
        const float* map = maps.ptr() + l * T * T;
        nlohmann::json row = nlohmann::json::array();
        for (int64_t j = 0; j < T; ++j) row.push_back(json_number(map[(T - 1) * T + j]));
        last_rows.push_back(std::move(row));
        if (!o.pictures) continue;
        const std::string file = fmt::format("{}/layer_{:02}.png", name, l);
        HeatmapStyle style = o.style;
        const ValueRange range = visible_value_range(map, visibility);
        style.vmin = range.vmin, style.vmax = range.vmax;
        style.title = fmt::format("{} after layer {}", title, l);
        style.row_axis_label = "position", style.column_axis_label = "input token";
        style.colorbar_label = name;
        write_head_png(out.file(file), map, visibility, tokens, tokens, style);
    }
    const std::vector<std::string> findings = {last_position_finding(name, maps.ptr() + (L * T - 1) * T, L, T, tokens)};
    nlohmann::json entry = {
        {"file", fmt::format("{}.npy", name)}, {"shape", maps.shape}, {"last_row", last_rows}, {"findings", findings}};
    if (o.pictures) entry["pictures"] = fmt::format("{}/layer_NN.png", name);
    return entry;
}

}  // namespace

nlohmann::json write_rollout_outputs(OutputDir& out, const std::vector<const LayerResult*>& layers,
                                     const std::vector<std::string>& tokens, const ReportOptions& o) {
    std::vector<const Tensor*> maps;
    for (const LayerResult* layer : layers) maps.push_back(&layer->attention);
    return {{"attention_rollout", write_layer_maps(out, "rollout", attention_rollout(maps), "Attention rollout",
                                                   layers.front()->visibility, tokens, o)}};
}

nlohmann::json write_flow_outputs(OutputDir& out, const std::vector<const LayerResult*>& layers,
                                  const std::vector<std::string>& tokens, const ReportOptions& o,
                                  const std::function<void(int64_t done, int64_t total)>& on_rows) {
    std::vector<const Tensor*> maps;
    for (const LayerResult* layer : layers) maps.push_back(&layer->attention);
    return {{"attention_flow", write_layer_maps(out, "flow", attention_flow(maps, on_rows), "Attention flow",
                                                layers.front()->visibility, tokens, o)}};
}

}  // namespace attn_viz
