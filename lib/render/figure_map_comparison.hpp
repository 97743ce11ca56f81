// One head's map in two runs side by side, with their difference: panel A and panel B on one
// shared color scale from 0 (so equal weights look equal), then the signed difference A - B on a
// diverging colormap (RdBu) over [-m, m], m the largest |A - B| of the head, so where A attends
// more shows red, where B does blue, and a change cannot be mistaken for a weight. For `compare
// --diff-pictures`.
#pragma once

#include <string>
#include <vector>

#include "heatmap_layout.hpp"

namespace attn_viz {

struct MapComparisonTitles {
    std::string a, b, difference;
};

// a, b: [T, S] the head's weights in each run, same visibility. style: colormap, pixel budget,
// pooling and labels of every panel (its range and title are set here). Writes one PNG (three
// panels left to right); throws Error(io) when it cannot.
void write_map_comparison_png(const std::string& path, const float* a, const float* b, const Visibility& visibility,
                              const std::vector<std::string>& query_tokens, const std::vector<std::string>& key_tokens,
                              const HeatmapStyle& style, const MapComparisonTitles& titles);

// The signed difference a - b of two [T, S] maps, 0 where the mask hides a cell.
std::vector<float> signed_difference(const float* a, const float* b, const Visibility& visibility);

}  // namespace attn_viz
