// Top-1 agreement of two runs' maps and the ranked per-head table.
#include "ranked_compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "compare_summary.hpp"
#include "findings.hpp"

namespace attn_viz {
namespace {

// Index of the largest of row[0..end) over visible keys, or -1 when none is visible.
int64_t strongest_key(const float* row, const Visibility& visibility, int64_t query) {
    int64_t best = -1;
    for (int64_t j = 0; j < visibility.visible_end(query); ++j)
        if (visibility.visible(query, j) && (best < 0 || row[j] > row[best])) best = j;
    return best;
}

}  // namespace

std::vector<double> top1_agreement(const std::vector<const LayerResult*>& first,
                                   const std::vector<const LayerResult*>& second) {
    std::vector<double> result;
    for (size_t l = 0; l < first.size(); ++l) {
        const Tensor &a = first[l]->attention, &b = second[l]->attention;
        const Visibility& visibility = first[l]->visibility;
        const int64_t H = a.dim(0), T = a.dim(1), S = a.dim(2);
        for (int64_t h = 0; h < H; ++h) {
            int64_t agree = 0, queries = 0;
            for (int64_t i = 0; i < T; ++i) {
                const int64_t ka = strongest_key(a.ptr() + (h * T + i) * S, visibility, i);
                if (ka < 0) continue;
                ++queries;
                agree += ka == strongest_key(b.ptr() + (h * T + i) * S, visibility, i);
            }
            result.push_back(queries ? static_cast<double>(agree) / static_cast<double>(queries) : std::nan(""));
        }
    }
    return result;
}

std::string ranked_comparison_table(const HeadComparison& c, const std::vector<double>& top1) {
    const std::vector<double>& js = c.maps.js_distance;
    std::string out;
    out += fmt::format("{:>5} {:>4} {:>10} {:>10} {:>7}  {:<15} {:<15}\n", "layer", "head", "JS dist", "map corr",
                       "top-1", "label A", "label B");
    for (const int64_t i : ranked_heads(js)) {
        const size_t n = static_cast<size_t>(i);
        out += fmt::format("{:5} {:4} {:10.6f} {:10.6f} {:7.3f}  {:<15} {:<15}\n", c.first.head_ids[n].layer,
                           c.first.head_ids[n].head, js[n], c.maps.correlation[n], top1[n], shown_label(c.first, i),
                           shown_label(c.second, i));
    }
    return out;
}

}  // namespace attn_viz
