#include "analysis_pictures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "figure_matrix.hpp"
#include "heatmap.hpp"

namespace attn_viz {

namespace {

// The largest finite entry of m (at least `floor`).
float largest(const HeadMatrix& m, double floor) {
    double top = floor;
    for (double v : m.values)
        if (std::isfinite(v)) top = std::max(top, v);
    return static_cast<float>(top);
}

// keys_needed of every head as a [layers, heads] grid, log color scale from 1 to S keys.
void write_keys_needed_png(const std::string& path, const ModelAnalysis& a, const ReportOptions& o) {
    Tensor grid({a.num_layers, a.num_heads});
    for (size_t n = 0; n < a.heads.size(); ++n) {
        const double k = a.heads[n].keys_needed;
        grid.data[n] = std::isfinite(k) ? static_cast<float>(k) : 1.0f;
    }
    std::vector<std::string> layers, heads;
    // Appended piece by piece: "L" + std::to_string(...) trips GCC 12's -Wrestrict.
    for (int64_t l = 0; l < a.num_layers; ++l) layers.push_back(std::string("L").append(std::to_string(l)));
    for (int64_t h = 0; h < a.num_heads; ++h) heads.push_back(std::string("H").append(std::to_string(h)));
    HeatmapStyle style = o.style;
    style.window.reset();
    style.vmin = 1.0f, style.vmax = static_cast<float>(std::max<int64_t>(a.num_keys, 2));
    style.log_scale = true, style.raw_labels = true, style.labels = true;
    char title[80];
    std::snprintf(title, sizeof title, "keys needed for output error <= %g", a.thresholds.sparse_tolerance);
    style.title = title;
    style.colorbar_label = "top-k keys", style.row_axis_label = "layer", style.column_axis_label = "head";
    Visibility all;
    all.queries = a.num_layers, all.keys = a.num_heads;
    write_head_png(path, grid.ptr(), all, layers, heads, style);
}

}  // namespace

Tensor head_matrix_tensor(const HeadMatrix& m, float undefined) {
    Tensor t({m.size, m.size});
    std::transform(m.values.begin(), m.values.end(), t.data.begin(),
                   [undefined](double v) { return std::isnan(v) ? undefined : static_cast<float>(v); });
    return t;
}

void write_dependence_pictures(OutputDir& out, const std::string& folder, const ModelAnalysis& a,
                               const std::vector<std::string>& names, const ReportOptions& o) {
    const HeadMatrix& output_mi = a.matrix(PairMetric::output_mi);
    const HeadMatrix& choice_mi = a.matrix(PairMetric::choice_mi);
    write_matrix_png(out.file(folder + "output_mi.png"), head_matrix_tensor(output_mi, 0.0f), names,
                     "Gaussian mutual information of head outputs", o.style.colormap, 0.0f, largest(output_mi, 1e-9),
                     "nats", o.style.max_px);
    write_matrix_png(out.file(folder + "output_cka.png"), head_matrix_tensor(a.matrix(PairMetric::output_cka), 0.0f), names,
                     "Linear CKA of head outputs", o.style.colormap, 0.0f, 1.0f, "CKA", o.style.max_px);
    write_matrix_png(out.file(folder + "choice_mi.png"), head_matrix_tensor(choice_mi, 0.0f), names,
                     "Mutual information of attention choices", o.style.colormap, 0.0f, largest(choice_mi, 1e-9), "nats",
                     o.style.max_px);
    const bool any_keys = std::any_of(a.heads.begin(), a.heads.end(), [](const HeadStats& s) { return std::isfinite(s.keys_needed); });
    if (any_keys) write_keys_needed_png(out.file(folder + "keys_needed.png"), a, o);
}

}  // namespace attn_viz
