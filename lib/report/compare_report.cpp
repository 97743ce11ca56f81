#include "compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "compare_summary.hpp"
#include "figure_head_grid.hpp"
#include "figure_map_comparison.hpp"
#include "findings.hpp"
#include "report.hpp"

namespace attn_viz {
namespace {

// The layers x heads pictures' side: wide enough for titles that name both models.
constexpr int grid_max_px = 1200;

std::string picture_name(const HeadId& id, bool layers) {
    if (layers) return fmt::format("diff_layer_{:02}_head_{:02}.png", id.layer, id.head);
    return fmt::format("diff_head_{:02}.png", id.head);
}

// "; largest 0.0042 (L3H6)": the most extreme defined value (the largest, or the smallest when
// `lowest`) and its head; "" when none is defined.
std::string extreme_note(const HeadComparison& c, const std::vector<double>& values, bool lowest) {
    int64_t best = -1;
    for (size_t n = 0; n < values.size(); ++n)
        if (std::isfinite(values[n]) && (best < 0 || (lowest ? values[n] < values[static_cast<size_t>(best)]
                                                             : values[n] > values[static_cast<size_t>(best)])))
            best = static_cast<int64_t>(n);
    if (best < 0) return "";
    return fmt::format("; {} {:.3g} ({})", lowest ? "lowest" : "largest", values[static_cast<size_t>(best)],
                       head_tag(c.first.head_ids[static_cast<size_t>(best)]));
}

std::vector<float> grid_values(const std::vector<double>& values) {
    std::vector<float> grid;
    for (const double v : values) grid.push_back(std::isfinite(v) ? static_cast<float>(v) : NAN);
    return grid;
}

}  // namespace

ComparedNames compared_names(const std::string& path_a, const std::string& path_b) {
    const auto last_part = [](const std::string& path) {
        const std::filesystem::path p(path);
        const std::string name = (p.has_filename() ? p : p.parent_path()).filename().string();
        return name.empty() ? path : name;
    };
    ComparedNames names{last_part(path_a), last_part(path_b)};
    if (names.a == names.b) names = {path_a, path_b};
    return names;
}

std::vector<int64_t> most_changed_heads(const HeadComparison& c, int64_t count) {
    std::vector<int64_t> order = ranked_heads(c.maps.js_distance);
    order.resize(static_cast<size_t>(std::min<int64_t>(count, static_cast<int64_t>(order.size()))));
    return order;
}

void write_diff_pictures(OutputDir& out, const HeadComparison& c, const std::vector<const LayerResult*>& first,
                         const std::vector<const LayerResult*>& second, const std::vector<std::string>& tokens,
                         const ComparedNames& names, int64_t count) {
    const Visibility& vis = first.front()->visibility;
    const int64_t map_size = vis.queries * vis.keys;
    HeatmapStyle style;
    style.max_px = 800;
    for (const int64_t n : most_changed_heads(c, count)) {
        const HeadId& id = c.first.head_ids[static_cast<size_t>(n)];
        const size_t layer = static_cast<size_t>(id.layer);
        const float* a = first[layer]->attention.ptr() + id.head * map_size;
        const float* b = second[layer]->attention.ptr() + id.head * map_size;
        float largest = 0, largest_weight = 0;
        for (int64_t k = 0; k < map_size; ++k)
            largest = std::max(largest, std::abs(a[k] - b[k])), largest_weight = std::max({largest_weight, a[k], b[k]});
        const std::string head =
            fmt::format("{}head {}", first.size() > 1 ? fmt::format("layer {} ", id.layer) : "", id.head);
        const std::string change = fmt::format(
            "A - B: at most {:.2g} ({:.2g}% of the largest weight), JS distance {:.3g}", largest,
            largest_weight > 0 ? 100 * largest / largest_weight : 0.0, c.maps.js_distance[static_cast<size_t>(n)]);
        write_map_comparison_png(out.file(picture_name(id, first.size() > 1)), a, b, vis, tokens, tokens, style,
                                 {fmt::format("A ({}): {} - {}", names.a, head, shown_label(c.first, n)),
                                  fmt::format("B ({}): {} - {}", names.b, head, shown_label(c.second, n)), change});
    }
}

void write_comparison_pictures(OutputDir& out, const HeadComparison& c, const std::vector<double>& top1,
                               const ComparedNames& names, const std::string& over, const std::string& folder) {
    const int64_t L = c.first.num_layers, H = c.first.num_heads;
    const std::string models = fmt::format("A ({}) and B ({})", names.a, names.b);
    HeadGridStyle js;
    js.title = fmt::format("JS distance between the maps of {}, per head{}{}", models, over,
                           extreme_note(c, c.maps.js_distance, false));
    js.value_label = "JS distance", js.colormap = "magma", js.log_scale = true, js.low = 0.0f, js.high = 1.0f;
    js.max_px = grid_max_px;
    write_head_grid_png(out.file(fmt::format("{}js_distance.png", folder)), grid_values(c.maps.js_distance), L, H, js);
    HeadGridStyle correlation;
    correlation.title = fmt::format("Correlation of the maps of {}, per head{}{}", models, over,
                                    extreme_note(c, c.maps.correlation, true));
    correlation.value_label = "map correlation", correlation.signed_values = true;
    correlation.low = -1.0f, correlation.high = 1.0f, correlation.max_px = grid_max_px;
    write_head_grid_png(out.file(fmt::format("{}map_correlation.png", folder)), grid_values(c.maps.correlation), L, H,
                        correlation);
    HeadGridStyle agreement;
    agreement.title = fmt::format("Queries whose strongest key agrees in {}, per head{}{}", models, over,
                                  extreme_note(c, top1, true));
    agreement.value_label = "top-1 agreement", agreement.low = 0.0f, agreement.high = 1.0f,
    agreement.max_px = grid_max_px;
    write_head_grid_png(out.file(fmt::format("{}top1_agreement.png", folder)), grid_values(top1), L, H, agreement);
}

}  // namespace attn_viz
