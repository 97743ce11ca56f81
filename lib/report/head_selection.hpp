// Which heads a model run draws (attn-viz model --layers / --heads): the per-head pictures,
// overview rows and report.html maps are limited to them; statistics always cover every head.
#pragma once

#include <cstdint>
#include <vector>

namespace attn_viz {

class HeadSelection {
public:
    HeadSelection() = default;  // every head
    // chosen: [layers][heads], 1 = draw that head.
    explicit HeadSelection(std::vector<std::vector<uint8_t>> chosen) : chosen_(std::move(chosen)) {}

    bool all() const { return chosen_.empty(); }
    bool has_head(int64_t layer, int64_t head) const {
        return all() || (layer >= 0 && layer < static_cast<int64_t>(chosen_.size()) && head >= 0 &&
                         head < static_cast<int64_t>(chosen_[static_cast<size_t>(layer)].size()) &&
                         chosen_[static_cast<size_t>(layer)][static_cast<size_t>(head)] != 0);
    }
    bool has_layer(int64_t layer) const {
        if (all()) return true;
        if (layer < 0 || layer >= static_cast<int64_t>(chosen_.size())) return false;
        for (uint8_t c : chosen_[static_cast<size_t>(layer)])
            if (c) return true;
        return false;
    }
    // The chosen heads of `layer` in order, of num_heads.
    std::vector<int64_t> heads_of(int64_t layer, int64_t num_heads) const {
        std::vector<int64_t> heads;
        for (int64_t h = 0; h < num_heads; ++h)
            if (has_head(layer, h)) heads.push_back(h);
        return heads;
    }

private:
    std::vector<std::vector<uint8_t>> chosen_;
};

}  // namespace attn_viz
