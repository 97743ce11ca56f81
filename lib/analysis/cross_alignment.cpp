#include "cross_alignment.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "stats_report.hpp"

namespace attn_viz {
namespace {

// values -> their ranks 1..n, ties sharing their mean rank (as Spearman's correlation takes them).
std::vector<double> ranks(const std::vector<double>& values) {
    const size_t n = values.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    std::vector<double> rank(n);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && values[order[j + 1]] == values[order[i]]) ++j;
        for (size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
        i = j + 1;
    }
    return rank;
}

// Pearson correlation of the ranks of x and y; NaN when either is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
    const std::vector<double> rx = ranks(x), ry = ranks(y);
    const double n = static_cast<double>(x.size()), mean = (n + 1.0) / 2.0;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i)
        sxy += (rx[i] - mean) * (ry[i] - mean), sxx += (rx[i] - mean) * (rx[i] - mean),
            syy += (ry[i] - mean) * (ry[i] - mean);
    if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
    return sxy / std::sqrt(sxx * syy);
}

// a: [T, S] one head's map -> its alignment statistics.
CrossAlignment head_alignment(const float* a, int64_t T, int64_t S) {
    CrossAlignment r;
    const double ratio = static_cast<double>(S) / static_cast<double>(T), band = std::max(1.0, ratio);
    std::vector<double> rows, argmax;
    std::vector<double> received(static_cast<size_t>(S), 0.0);
    for (int64_t i = 0; i < T; ++i) {
        const float* row = a + i * S;
        const double centre = (static_cast<double>(i) + 0.5) * ratio - 0.5;
        double entropy = 0, in_band = 0;
        for (int64_t j = 0; j < S; ++j) {
            const double p = row[j];
            if (p > 0) entropy -= p * std::log(p);
            if (std::fabs(static_cast<double>(j) - centre) <= band) in_band += p;
            received[static_cast<size_t>(j)] += p;
        }
        const int64_t best = std::max_element(row, row + S) - row;
        r.entropy += entropy, r.diagonal += in_band, r.confidence += row[best];
        rows.push_back(static_cast<double>(i)), argmax.push_back(static_cast<double>(best));
    }
    r.entropy /= static_cast<double>(T), r.diagonal /= static_cast<double>(T), r.confidence /= static_cast<double>(T);
    r.monotonicity = T < 2 ? std::numeric_limits<double>::quiet_NaN() : spearman(rows, argmax);
    const double floor = static_cast<double>(T) / (2.0 * static_cast<double>(S));
    r.coverage =
        static_cast<double>(std::count_if(received.begin(), received.end(), [&](double m) { return m >= floor; })) /
        static_cast<double>(S);
    return r;
}

}  // namespace

std::vector<CrossAlignment> cross_alignment(const Tensor& map) {
    const int64_t H = map.dim(0), T = map.dim(1), S = map.dim(2);
    std::vector<CrossAlignment> heads;
    for (int64_t h = 0; h < H; ++h) heads.push_back(head_alignment(map.ptr() + h * T * S, T, S));
    return heads;
}

const std::array<CrossAlignmentField, cross_alignment_count>& cross_alignment_fields() {
    static const std::array<CrossAlignmentField, cross_alignment_count> fields = {
        {{"entropy", &CrossAlignment::entropy},
         {"confidence", &CrossAlignment::confidence},
         {"diagonal", &CrossAlignment::diagonal},
         {"monotonicity", &CrossAlignment::monotonicity},
         {"coverage", &CrossAlignment::coverage}}};
    return fields;
}

nlohmann::json cross_alignment_json(const CrossAlignment& a) {
    nlohmann::json j = nlohmann::json::object();
    for (const CrossAlignmentField& f : cross_alignment_fields()) j[f.name] = json_number(a.*f.member);
    return j;
}

}  // namespace attn_viz
