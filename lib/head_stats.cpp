#include "head_stats.hpp"

#include <cmath>

namespace attn_viz {

std::vector<HeadStats> compute_head_stats(const LayerResult& r) {
    const Visibility& vis = r.visibility;
    const int64_t H = r.attention.dim(0), T = vis.queries, S = vis.keys;
    std::vector<HeadStats> stats(static_cast<size_t>(H));
    for (int64_t h = 0; h < H; ++h) {
        double entropy_sum = 0, normalized_sum = 0;
        int64_t rows = 0;
        for (int64_t i = 0; i < T; ++i) {
            const int64_t seen = vis.visible_count(i);
            if (seen == 0) continue;
            const float* row = r.attention.ptr() + (h * T + i) * S;
            double e = 0;
            for (int64_t j = 0; j < S; ++j)
                if (row[j] > 0) e -= row[j] * std::log(static_cast<double>(row[j]));
            entropy_sum += e;
            normalized_sum += seen > 1 ? e / std::log(static_cast<double>(seen)) : 0.0;
            ++rows;
        }
        if (rows > 0) stats[static_cast<size_t>(h)] = {entropy_sum / rows, normalized_sum / rows};
    }
    return stats;
}

Tensor attention_correlation(const LayerResult& r) {
    const Visibility& vis = r.visibility;
    const int64_t H = r.attention.dim(0), T = vis.queries, S = vis.keys;
    // Gather each head's visible entries once, centred.
    std::vector<std::vector<double>> centred(static_cast<size_t>(H));
    for (int64_t h = 0; h < H; ++h) {
        auto& v = centred[static_cast<size_t>(h)];
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < S; ++j)
                if (vis.visible(i, j)) v.push_back(r.attention.data[(h * T + i) * S + j]);
        double mean = 0;
        for (double x : v) mean += x;
        mean /= v.empty() ? 1 : static_cast<double>(v.size());
        for (double& x : v) x -= mean;
    }
    Tensor corr({H, H});
    std::vector<double> norm(static_cast<size_t>(H));
    for (int64_t h = 0; h < H; ++h) {
        double s = 0;
        for (double x : centred[static_cast<size_t>(h)]) s += x * x;
        norm[static_cast<size_t>(h)] = std::sqrt(s);
    }
    for (int64_t a = 0; a < H; ++a)
        for (int64_t b = a; b < H; ++b) {
            double c = a == b ? 1.0 : 0.0;
            if (a != b && norm[a] > 0 && norm[b] > 0) {
                double dot = 0;
                const auto &x = centred[a], &y = centred[b];
                for (size_t n = 0; n < x.size(); ++n) dot += x[n] * y[n];
                c = dot / (norm[a] * norm[b]);
            }
            corr.data[a * H + b] = corr.data[b * H + a] = static_cast<float>(c);
        }
    return corr;
}

}  // namespace attn_viz
