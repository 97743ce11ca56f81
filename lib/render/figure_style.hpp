// Sizes shared by every picture, so the heatmaps, overview and bar chart look like one family.
#pragma once

namespace attn_viz::figure_style {

inline constexpr int margin = 24;            // blank border around every picture
inline constexpr int max_label_width = 140;  // longer labels are shortened with "…"
inline constexpr float title_px = 16.0f;     // line heights of the text sizes
inline constexpr float label_px = 12.0f;     // token / bar labels
inline constexpr float axis_px = 13.0f;      // axis names, overview headers
inline constexpr float tick_px = 11.0f;      // tick numbers, tile captions

}  // namespace attn_viz::figure_style
