#include "analysis_pictures.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "figure_head_grid.hpp"
#include "figure_matrix.hpp"

namespace attn_viz {

namespace {

// The color range of a dependence matrix: from min(0, smallest) to the largest finite entry off
// its diagonal (at least 1e-9), so that a head with itself does not take the whole range.
ValueRange off_diagonal_range(const HeadMatrix& m) {
    double low = 0.0, high = 1e-9;
    for (int64_t i = 0; i < m.size; ++i)
        for (int64_t j = 0; j < m.size; ++j)
            if (i != j && std::isfinite(m.at(i, j))) low = std::min(low, m.at(i, j)), high = std::max(high, m.at(i, j));
    return {static_cast<float>(low), static_cast<float>(high)};
}

// keys_needed of every head as a [layers, heads] grid, log color scale from 1 to S keys; a head
// that no size serves (undefined) is hatched.
void write_keys_needed_png(const std::string& path, const ModelAnalysis& a, const ReportOptions& o) {
    std::vector<float> grid;
    for (const HeadStats& s : a.heads) grid.push_back(static_cast<float>(s.keys_needed));
    HeadGridStyle style;
    style.title = fmt::format("keys needed for output error <= {:g}", a.thresholds.sparse_tolerance);
    style.value_label = "top-k keys", style.colormap = o.style.colormap, style.max_px = o.style.max_px;
    style.log_scale = true, style.low = 1.0f, style.high = static_cast<float>(std::max<int64_t>(a.num_keys, 2));
    write_head_grid_png(path, grid, a.num_layers, a.num_heads, style);
}

}  // namespace

std::string matrix_title(const std::string& title, const HeadMatrix& m, const ModelAnalysis& a) {
    if (a.num_layers < 2) return title;
    for (int64_t i = 0; i < m.size; ++i)
        for (int64_t j = 0; j < m.size; ++j)
            if (i / a.num_heads != j / a.num_heads && !std::isnan(m.at(i, j))) return title;
    return fmt::format("{}, within layers", title);
}

Tensor head_matrix_tensor(const HeadMatrix& m, float undefined) {
    Tensor t({m.size, m.size});
    std::transform(m.values.begin(), m.values.end(), t.data.begin(),
                   [undefined](double v) { return std::isnan(v) ? undefined : static_cast<float>(v); });
    return t;
}

void write_dependence_pictures(OutputDir& out, const std::string& folder, const ModelAnalysis& a,
                               const std::vector<std::string>& names, const ReportOptions& o) {
    const int64_t layer_heads = a.num_layers > 1 ? a.num_heads : 0;  // lines between layers
    const auto write = [&](const char* file, PairMetric metric, const char* title, const char* value_label) {
        const HeadMatrix& m = a.matrix(metric);
        const ValueRange range = off_diagonal_range(m);
        write_matrix_png(out.file(folder + file), head_matrix_tensor(m), names, matrix_title(title, m, a),
                         o.style.colormap, range.vmin, range.vmax, value_label, o.style.max_px, layer_heads);
    };
    write("output_mi.png", PairMetric::output_mi, "Gaussian mutual information of head outputs", "nats");
    write("output_cka.png", PairMetric::output_cka, "Linear CKA of head outputs", "CKA");
    write("choice_mi.png", PairMetric::choice_mi, "Mutual information of attention choices", "nats");
    const bool any_keys =
        std::any_of(a.heads.begin(), a.heads.end(), [](const HeadStats& s) { return std::isfinite(s.keys_needed); });
    if (any_keys) write_keys_needed_png(out.file(fmt::format("{}keys_needed.png", folder)), a, o);
}

}  // namespace attn_viz
