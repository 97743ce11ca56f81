// What the per-head effect outputs share (ablation, direct logit attribution, activation
// patching): the ranked table of heads (CSV and stats.json), the layers x heads picture of one
// number per head, and numbers in findings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report.hpp"
#include "short_number.hpp"

namespace attn_viz {

// values: [L, H] one number per head (NaN: not measured, hatched) -> a labelled layers x heads
// picture at `path` (figure_head_grid.hpp): with the run's colormap from min(0, smallest) to the
// largest value, or (signed) with the diverging colormap over [-m, m], m the largest |value|, so 0
// is white and the two signs take opposite halves.
void write_layer_head_png(const std::string& path, const std::vector<float>& values, int64_t layers, int64_t heads,
                          const std::string& title, const std::string& value_label, const ReportOptions& options,
                          bool signed_values = false);

// One head of a ranking with its named values (in the order of the names).
struct RankedHeadRow {
    int64_t layer = 0, head = 0;
    std::vector<double> values;
};

// rows: the heads in rank order; names: their values' names. Writes the CSV "rank, index, layer,
// head, <names>" (index = layer * heads + head; undefined values as empty fields) at `path` and
// returns the same rows as stats.json objects (undefined values as null).
nlohmann::json write_ranked_heads(const std::string& path, const std::vector<std::string>& names,
                                  const std::vector<RankedHeadRow>& rows, int64_t heads);

// Value number `value` of each row at its head's place in [L, H] (NaN for heads not in `rows`
// and undefined values, which the picture hatches): a layers x heads picture's data.
std::vector<float> layer_head_values(const std::vector<RankedHeadRow>& rows, size_t value, int64_t layers,
                                     int64_t heads);

}  // namespace attn_viz
