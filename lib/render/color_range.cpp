// Color ranges of maps and the dark-picture test (see color_range.hpp).
#include "color_range.hpp"

#include <algorithm>
#include <cmath>

namespace attn_viz {

ValueRange map_color_range(const ColorRangeRule& rule, ValueRange own, ValueRange all) {
    ValueRange range = rule.scale == ScaleMode::head ? own : ValueRange{std::min(0.0f, all.vmin), all.vmax};
    if (rule.vmin) range.vmin = *rule.vmin;
    if (rule.vmax) range.vmax = *rule.vmax;
    // Equal to float rounding (a uniform row's softmax may differ in the last bit) counts as empty.
    if (!(range.vmax - range.vmin > 1e-6f * std::max(std::abs(range.vmin), std::abs(range.vmax)))) {
        const float value = range.vmax;
        range = {std::min(value, 0.0f), std::max(value, 1.0f)};
    }
    return range;
}

bool mostly_dark(const float* weights, const Visibility& visibility, const ValueScale& scale) {
    if (scale.log_scale || !visibility.causal) return false;
    const uint8_t* excluded = visibility.key_excluded.empty() ? nullptr : visibility.key_excluded.data();
    // position(w) > 0.1 on a linear scale, as one comparison per weight
    const float bright_above = static_cast<float>(scale.value_at(0.1));
    int64_t rows = 0, dark_rows = 0;
    for (int64_t i = 0; i < visibility.queries; ++i) {
        const float* row = weights + i * visibility.keys;
        const int64_t end = visibility.visible_end(i);
        bool seen = false, bright = false;
        for (int64_t j = visibility.visible_begin(i); j < end && !bright; ++j) {
            if (excluded && excluded[j]) continue;
            seen = true;
            bright = row[j] > bright_above;
        }
        rows += seen;
        dark_rows += seen && !bright;
    }
    return 2 * dark_rows > rows;
}

}  // namespace attn_viz
