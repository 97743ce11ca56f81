#include "head_effect_outputs.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "figure_head_grid.hpp"
#include "file_write.hpp"
#include "stats_report.hpp"

namespace attn_viz {

void write_layer_head_png(const std::string& path, const std::vector<float>& values, int64_t layers, int64_t heads,
                          const std::string& title, const std::string& value_label, const ReportOptions& o,
                          bool signed_values) {
    HeadGridStyle style;
    style.title = title, style.value_label = value_label, style.colormap = o.style.colormap;
    style.signed_values = signed_values, style.max_px = o.style.max_px;
    write_head_grid_png(path, values, layers, heads, style);
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
    std::vector<float> values(static_cast<size_t>(layers * heads), std::numeric_limits<float>::quiet_NaN());
    for (const RankedHeadRow& row : rows)
        if (std::isfinite(row.values[value]))
            values[static_cast<size_t>(row.layer * heads + row.head)] = static_cast<float>(row.values[value]);
    return values;
}

}  // namespace attn_viz
