#include "head_effect_outputs.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "colormap.hpp"
#include "file_write.hpp"
#include "heatmap.hpp"
#include "stats_report.hpp"

namespace attn_viz {

void write_layer_head_png(const std::string& path, const std::vector<float>& values, int64_t layers, int64_t heads,
                          const std::string& title, const std::string& value_label, const ReportOptions& o,
                          bool signed_values) {
    std::vector<std::string> layer_names, head_names;
    for (int64_t l = 0; l < layers; ++l) layer_names.push_back(fmt::format("L{}", l));
    for (int64_t h = 0; h < heads; ++h) head_names.push_back(fmt::format("H{}", h));
    const Visibility all{layers, heads, false, {}};
    HeatmapStyle style;
    style.colormap = o.style.colormap, style.max_px = o.style.max_px;
    const ValueRange range = visible_value_range(values.data(), all);
    style.vmin = range.vmin, style.vmax = range.vmax;
    if (signed_values) {
        const float largest = std::max({std::abs(range.vmin), std::abs(range.vmax), 1e-12f});
        style.colormap = diverging_colormap, style.vmin = -largest, style.vmax = largest;
    }
    style.title = title, style.colorbar_label = value_label;
    style.raw_labels = true, style.row_axis_label = "layer", style.column_axis_label = "head";
    write_head_png(path, values.data(), all, layer_names, head_names, style);
}

nlohmann::json write_ranked_heads(const std::string& path, const std::vector<std::string>& names,
                                  const std::vector<RankedHeadRow>& rows, int64_t heads) {
    std::string csv = "rank,index,layer,head";
    for (const std::string& name : names) csv += fmt::format(",{}", name);
    csv += "\n";
    nlohmann::json ranking = nlohmann::json::array();
    for (size_t r = 0; r < rows.size(); ++r) {
        const RankedHeadRow& row = rows[r];
        const int64_t index = row.layer * heads + row.head;
        nlohmann::json entry = {{"rank", r + 1}, {"index", index}, {"layer", row.layer}, {"head", row.head}};
        csv += fmt::format("{},{},{},{}", r + 1, index, row.layer, row.head);
        for (size_t v = 0; v < names.size(); ++v) {
            csv += fmt::format(",{}", csv_number(row.values[v]));
            entry[names[v]] = json_number(row.values[v]);
        }
        csv += "\n";
        ranking.push_back(entry);
    }
    write_file_bytes(path, csv);
    return ranking;
}

std::vector<float> layer_head_values(const std::vector<RankedHeadRow>& rows, size_t value, int64_t layers,
                                     int64_t heads) {
    std::vector<float> values(static_cast<size_t>(layers * heads), 0.0f);
    for (const RankedHeadRow& row : rows)
        if (std::isfinite(row.values[value]))
            values[static_cast<size_t>(row.layer * heads + row.head)] = static_cast<float>(row.values[value]);
    return values;
}

}  // namespace attn_viz
