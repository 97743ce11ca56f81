#include "compare_pictures.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compare_summary.hpp"
#include "figure_map_comparison.hpp"

namespace attn_viz_cli {
namespace {

std::string picture_name(const attn_viz::HeadId& id, bool layers) {
    if (layers) return fmt::format("diff_layer_{:02}_head_{:02}.png", id.layer, id.head);
    return fmt::format("diff_head_{:02}.png", id.head);
}

}  // namespace

std::vector<int64_t> most_changed_heads(const attn_viz::HeadComparison& c, int64_t count) {
    std::vector<int64_t> order = attn_viz::ranked_heads(c.maps.js_distance);
    order.resize(static_cast<size_t>(std::min<int64_t>(count, static_cast<int64_t>(order.size()))));
    return order;
}

void write_diff_pictures(attn_viz::OutputDir& out, const attn_viz::HeadComparison& c,
                         const std::vector<const attn_viz::LayerResult*>& first,
                         const std::vector<const attn_viz::LayerResult*>& second,
                         const std::vector<std::string>& tokens, int64_t count) {
    const attn_viz::Visibility& vis = first.front()->visibility;
    const int64_t map_size = vis.queries * vis.keys;
    attn_viz::HeatmapStyle style;
    style.max_px = 800;
    for (const int64_t n : most_changed_heads(c, count)) {
        const attn_viz::HeadId& id = c.first.head_ids[static_cast<size_t>(n)];
        const size_t layer = static_cast<size_t>(id.layer);
        const std::string head =
            fmt::format("{}head {}", first.size() > 1 ? fmt::format("layer {} ", id.layer) : "", id.head);
        const std::string change =
            fmt::format("A - B (JS distance {:.3f})", c.maps.js_distance[static_cast<size_t>(n)]);
        attn_viz::write_map_comparison_png(
            out.file(picture_name(id, first.size() > 1)), first[layer]->attention.ptr() + id.head * map_size,
            second[layer]->attention.ptr() + id.head * map_size, vis, tokens, tokens, style,
            {fmt::format("A: {} - {}", head, c.first.labels[static_cast<size_t>(n)]),
             fmt::format("B: {} - {}", head, c.second.labels[static_cast<size_t>(n)]), change});
    }
}

}  // namespace attn_viz_cli
