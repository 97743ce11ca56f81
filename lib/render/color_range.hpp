// Which weights the colors of a map span: the map's own range (--scale head) or one range shared
// by every map starting at 0 (--scale global, the default), with fixed ends on top (--vmin,
// --vmax), and a map whose weights are all equal drawn at its value rather than at the top.
#pragma once

#include <optional>

#include "colormap.hpp"
#include "heatmap_grid.hpp"

namespace attn_viz {

struct ColorRangeRule {
    ScaleMode scale = ScaleMode::global;
    std::optional<float> vmin, vmax;  // fixed ends: every map's range takes them when set

    ColorRangeRule() = default;
    ColorRangeRule(ScaleMode mode) : scale(mode) {}  // NOLINT: a bare mode is a rule without fixed ends
};

// own: the map's smallest and largest visible weight; all: those over every map of the run.
// head: own; global: [min(0, all.vmin), all.vmax]; then the fixed ends. A range that is empty
// (within 1e-6 relative: a constant map under head, all maps constant under global) widens to
// [min(v, 0), max(v, 1)], so a uniform map of weight 1/12 is drawn in the color of 1/12 on 0..1,
// never in the top color.
ValueRange map_color_range(const ColorRangeRule& rule, ValueRange own, ValueRange all);

// weights: [T, S] one head. True when a causal map comes out mostly dark: more than half of the
// query rows that see a key have no weight in the upper nine tenths of `scale`. Linear scales and
// causal maps only: row i of a spread-out causal head holds about 1/(i + 1) per key, so a long map
// looks black on 0..1 while a log scale shows its structure; a bidirectional map that flat is flat
// on any scale.
bool mostly_dark(const float* weights, const Visibility& visibility, const ValueScale& scale);

}  // namespace attn_viz
