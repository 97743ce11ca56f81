// A layers x heads picture of one number per head (ablation and patching effects, direct logit
// attribution, compare's per-head measures, keys needed): rows L0, L1, ..., columns H0, H1, ...,
// heads without a value (not measured, undefined) hatched like masked cells, never drawn as one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heatmap_layout.hpp"

namespace attn_viz {

struct HeadGridStyle {
    std::string title, value_label;
    std::string colormap = "viridis";  // unsigned values; signed ones take diverging_colormap
    // Signed values (a change, a contribution): the diverging colormap over [-m, m], m the largest
    // |value| (or of |low|, |high| when given), so 0 takes its centre and the two signs its halves.
    bool signed_values = false;
    bool log_scale = false;
    // The range's ends; unset, from the values: [min(0, smallest), largest], so a measure that
    // cannot be negative starts at 0 and its smallest value does not read as none.
    std::optional<float> low, high;
    int max_px = 1600;
};

// The colour range `style` gives `values` (NaN entries left out), as write_head_grid_png draws it.
ValueRange head_grid_range(const std::vector<float>& values, const HeadGridStyle& style);

// values: [layers, heads], NaN = no value (hatched). Writes the PNG and returns its layout; throws
// Error(io) when it cannot be written.
HeatmapLayout write_head_grid_png(const std::string& path, const std::vector<float>& values, int64_t layers,
                                  int64_t heads, const HeadGridStyle& style);

}  // namespace attn_viz
