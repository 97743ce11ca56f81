#include "head_clustering.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attn_viz {

std::vector<std::vector<int64_t>> cluster_heads(const HeadMatrix& distance, double cut) {
    const int64_t N = distance.size;
    constexpr double never = std::numeric_limits<double>::infinity();
    // Working copy of cluster-to-cluster distances, updated by the Lance-Williams rule for
    // average linkage: d(k, i+j) = (n_i d(k, i) + n_j d(k, j)) / (n_i + n_j).
    HeadMatrix d = distance;
    for (double& x : d.values) x = std::isnan(x) ? never : x;
    std::vector<std::vector<int64_t>> members(static_cast<size_t>(N));
    for (int64_t a = 0; a < N; ++a) members[static_cast<size_t>(a)] = {a};
    std::vector<bool> active(static_cast<size_t>(N), true);
    while (true) {
        int64_t best_a = -1, best_b = -1;
        double best = never;
        for (int64_t a = 0; a < N; ++a) {
            if (!active[static_cast<size_t>(a)]) continue;
            for (int64_t b = a + 1; b < N; ++b)
                if (active[static_cast<size_t>(b)] && d.at(a, b) < best) best = d.at(a, b), best_a = a, best_b = b;
        }
        if (best_a < 0 || !(best <= cut)) break;
        // Merge b into a.
        auto& ma = members[static_cast<size_t>(best_a)];
        auto& mb = members[static_cast<size_t>(best_b)];
        const double na = static_cast<double>(ma.size()), nb = static_cast<double>(mb.size());
        for (int64_t k = 0; k < N; ++k) {
            if (!active[static_cast<size_t>(k)] || k == best_a || k == best_b) continue;
            const double merged = (na * d.at(k, best_a) + nb * d.at(k, best_b)) / (na + nb);
            d.at(k, best_a) = d.at(best_a, k) = std::isnan(merged) ? never : merged;
        }
        ma.insert(ma.end(), mb.begin(), mb.end());
        std::sort(ma.begin(), ma.end());
        mb.clear();
        active[static_cast<size_t>(best_b)] = false;
    }
    std::vector<std::vector<int64_t>> groups;
    for (int64_t a = 0; a < N; ++a)
        if (active[static_cast<size_t>(a)] && members[static_cast<size_t>(a)].size() >= 2)
            groups.push_back(members[static_cast<size_t>(a)]);
    return groups;  // ordered by first member: cluster a keeps its lowest index a
}

std::vector<std::pair<int64_t, int64_t>> closest_pairs(const HeadMatrix& distance, int64_t count) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t a = 0; a < distance.size; ++a)
        for (int64_t b = a + 1; b < distance.size; ++b)
            if (!std::isnan(distance.at(a, b))) pairs.emplace_back(a, b);
    const size_t kept = static_cast<size_t>(std::clamp<int64_t>(count, 0, static_cast<int64_t>(pairs.size())));
    std::partial_sort(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(kept), pairs.end(),
                      [&](const auto& x, const auto& y) {
                          const double dx = distance.at(x.first, x.second), dy = distance.at(y.first, y.second);
                          return dx != dy ? dx < dy : x < y;
                      });
    pairs.resize(kept);
    return pairs;
}

}  // namespace attn_viz
