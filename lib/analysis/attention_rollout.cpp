#include "attention_rollout.hpp"

#include <algorithm>
#include <deque>

#include "error.hpp"

namespace attn_viz {
namespace {

// Residual capacities at or below this count as saturated (capacities are at most 1).
constexpr double saturated = 1e-12;

Tensor to_float_tensor(const std::vector<std::vector<double>>& layers, int64_t T) {
    Tensor out({static_cast<int64_t>(layers.size()), T, T});
    for (size_t l = 0; l < layers.size(); ++l)
        std::transform(layers[l].begin(), layers[l].end(), out.data.begin() + static_cast<int64_t>(l) * T * T,
                       [](double v) { return static_cast<float>(v); });
    return out;
}

}  // namespace

std::vector<std::vector<double>> residual_attention(const std::vector<const Tensor*>& maps) {
    std::vector<std::vector<double>> layers;
    for (const Tensor* map : maps) {
        const int64_t H = map->dim(0), T = map->dim(1);
        if (map->dim(2) != T)
            throw Error(ErrorKind::usage, "attention rollout needs self-attention (as many keys as queries)");
        std::vector<double> a(static_cast<size_t>(T * T), 0.0);
        for (int64_t h = 0; h < H; ++h)
            for (int64_t e = 0; e < T * T; ++e) a[e] += map->data[h * T * T + e];
        for (int64_t i = 0; i < T; ++i) {
            double* row = a.data() + i * T;
            double sum = 0;
            for (int64_t j = 0; j < T; ++j)
                sum += (row[j] = 0.5 * row[j] / static_cast<double>(H) + (i == j ? 0.5 : 0.0));
            for (int64_t j = 0; j < T; ++j) row[j] /= sum;
        }
        layers.push_back(std::move(a));
    }
    return layers;
}

Tensor attention_rollout(const std::vector<const Tensor*>& maps) {
    const std::vector<std::vector<double>> residual = residual_attention(maps);
    const int64_t T = maps.front()->dim(1);
    std::vector<std::vector<double>> rollout{residual.front()};
    for (size_t l = 1; l < residual.size(); ++l) {
        const std::vector<double>& a = residual[l];
        const std::vector<double>& below = rollout.back();
        std::vector<double> r(static_cast<size_t>(T * T), 0.0);
        for (int64_t i = 0; i < T; ++i)
            for (int64_t k = 0; k < T; ++k) {
                const double weight = a[i * T + k];
                if (weight == 0) continue;
                for (int64_t j = 0; j < T; ++j) r[i * T + j] += weight * below[k * T + j];
            }
        rollout.push_back(std::move(r));
    }
    return to_float_tensor(rollout, T);
}

Tensor attention_flow(const std::vector<const Tensor*>& maps,
                      const std::function<void(int64_t done, int64_t total)>& on_rows) {
    const std::vector<std::vector<double>> residual = residual_attention(maps);
    const int64_t L = static_cast<int64_t>(residual.size()), T = maps.front()->dim(1);
    std::vector<std::vector<double>> flow(static_cast<size_t>(L), std::vector<double>(static_cast<size_t>(T * T), 0.0));
    // Node (k, p): position p after layer k - 1 (k = 0: the input tokens), numbered k T + p.
    for (int64_t l = 0; l < L; ++l) {
        MaxFlow graph((l + 2) * T);
        for (int64_t k = 0; k <= l; ++k)
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j < T; ++j)
                    if (const double c = residual[k][i * T + j]; c > 0) graph.add_edge(k * T + j, (k + 1) * T + i, c);
        for (int64_t i = 0; i < T; ++i) {
            for (int64_t j = 0; j < T; ++j) flow[l][i * T + j] = graph.solve(j, (l + 1) * T + i);
            if (on_rows) on_rows(l * T + i + 1, L * T);
        }
    }
    return to_float_tensor(flow, T);
}

MaxFlow::MaxFlow(int64_t nodes) : out_(static_cast<size_t>(nodes)), level_(nodes), next_edge_(nodes) {}

void MaxFlow::add_edge(int64_t from, int64_t to, double capacity) {
    out_[from].push_back(static_cast<int64_t>(edges_.size()));
    edges_.push_back({to, capacity, 0});
    out_[to].push_back(static_cast<int64_t>(edges_.size()));
    edges_.push_back({from, 0, 0});
}

// Breadth-first levels over edges with residual capacity; true when the sink is reachable.
bool MaxFlow::build_levels(int64_t source, int64_t sink) {
    std::fill(level_.begin(), level_.end(), -1);
    std::deque<int64_t> queue{source};
    level_[source] = 0;
    while (!queue.empty()) {
        const int64_t node = queue.front();
        queue.pop_front();
        for (int64_t e : out_[node]) {
            const Edge& edge = edges_[e];
            if (level_[edge.to] < 0 && edge.capacity - edge.flow > saturated) {
                level_[edge.to] = level_[node] + 1;
                queue.push_back(edge.to);
            }
        }
    }
    return level_[sink] >= 0;
}

// Pushes up to `limit` from `node` towards the sink along level-increasing edges (one blocking-flow step).
double MaxFlow::push(int64_t node, int64_t sink, double limit) {
    if (node == sink) return limit;
    for (int64_t& i = next_edge_[node]; i < static_cast<int64_t>(out_[node].size()); ++i) {
        const int64_t e = out_[node][i];
        Edge& edge = edges_[e];
        const double room = edge.capacity - edge.flow;
        if (level_[edge.to] != level_[node] + 1 || room <= saturated) continue;
        if (const double pushed = push(edge.to, sink, std::min(limit, room)); pushed > 0) {
            edge.flow += pushed;
            edges_[e ^ 1].flow -= pushed;
            return pushed;
        }
    }
    return 0;
}

double MaxFlow::solve(int64_t source, int64_t sink) {
    for (Edge& edge : edges_) edge.flow = 0;
    if (source == sink) return 0;
    double total = 0;
    while (build_levels(source, sink)) {
        std::fill(next_edge_.begin(), next_edge_.end(), 0);
        while (const double pushed = push(source, sink, 1e300)) total += pushed;
    }
    return total;
}

}  // namespace attn_viz
