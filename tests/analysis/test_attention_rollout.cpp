// Attention rollout and flow against straightforward references: rollout as plain products of the
// residual-augmented maps, flow as the minimum cut found by trying every cut of small graphs.
#include <cmath>

#include <doctest/doctest.h>

#include "attention_rollout.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

// [H, T, T] random row-stochastic maps, hidden (future) keys 0 when causal.
Tensor random_maps(int64_t H, int64_t T, bool causal) {
    Tensor maps = random_tensor({H, T, T});
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < T; ++i) {
            float* row = maps.ptr() + (h * T + i) * T;
            double sum = 0;
            for (int64_t j = 0; j < T; ++j) sum += (row[j] = (causal && j > i) ? 0.0f : std::fabs(row[j]) + 0.01f);
            for (int64_t j = 0; j < T; ++j) row[j] = static_cast<float>(row[j] / sum);
        }
    return maps;
}

// Ã_l[i][j] from its definition.
double residual_entry(const Tensor& map, int64_t i, int64_t j) {
    const int64_t H = map.dim(0), T = map.dim(1);
    auto mixed = [&](int64_t col) {
        double mean = 0;
        for (int64_t h = 0; h < H; ++h) mean += map.data[(h * T + i) * T + col] / static_cast<double>(H);
        return 0.5 * mean + (col == i ? 0.5 : 0.0);
    };
    double row = 0;
    for (int64_t col = 0; col < T; ++col) row += mixed(col);
    return mixed(j) / row;
}

// The minimum over every cut (S side holds input token j, T side holds position i after layer l)
// of the capacity crossing from S to T: the maximum flow, by the max-flow min-cut theorem.
double brute_force_flow(const std::vector<Tensor>& maps, int64_t l, int64_t i, int64_t j) {
    const int64_t T = maps.front().dim(1), nodes = (l + 2) * T, source = j, sink = (l + 1) * T + i;
    std::vector<int64_t> free_nodes;
    for (int64_t n = 0; n < nodes; ++n)
        if (n != source && n != sink) free_nodes.push_back(n);
    double best = INFINITY;
    for (uint64_t mask = 0; mask < (uint64_t{1} << free_nodes.size()); ++mask) {
        std::vector<bool> on_source_side(static_cast<size_t>(nodes), false);
        on_source_side[source] = true;
        for (size_t b = 0; b < free_nodes.size(); ++b) on_source_side[free_nodes[b]] = (mask >> b) & 1;
        double cut = 0;
        for (int64_t k = 0; k <= l; ++k)
            for (int64_t to = 0; to < T; ++to)
                for (int64_t from = 0; from < T; ++from)
                    if (on_source_side[k * T + from] && !on_source_side[(k + 1) * T + to])
                        cut += residual_entry(maps[k], to, from);
        best = std::min(best, cut);
    }
    return best;
}

std::vector<const Tensor*> pointers(const std::vector<Tensor>& maps) {
    std::vector<const Tensor*> out;
    for (const Tensor& m : maps) out.push_back(&m);
    return out;
}

}  // namespace

TEST_SUITE("rollout") {

TEST_CASE("rollout is the product of the residual-augmented, head-averaged maps") {
    for (auto [L, H, T, causal] : {std::tuple{3, 2, 5, true}, std::tuple{1, 1, 1, true}, std::tuple{4, 3, 7, false}}) {
        INFO("L " << L << " H " << H << " T " << T);
        std::vector<Tensor> maps;
        for (int l = 0; l < L; ++l) maps.push_back(random_maps(H, T, causal));
        const Tensor rollout = attention_rollout(pointers(maps));
        REQUIRE(rollout.shape == std::vector<int64_t>{L, T, T});
        std::vector<double> product(static_cast<size_t>(T * T));
        for (int64_t i = 0; i < T; ++i)
            for (int64_t j = 0; j < T; ++j) product[i * T + j] = residual_entry(maps[0], i, j);
        for (int l = 0; l < L; ++l) {
            if (l > 0) {
                std::vector<double> next(product.size(), 0.0);
                for (int64_t i = 0; i < T; ++i)
                    for (int64_t j = 0; j < T; ++j)
                        for (int64_t k = 0; k < T; ++k)
                            next[i * T + j] += residual_entry(maps[l], i, k) * product[k * T + j];
                product = next;
            }
            for (int64_t e = 0; e < T * T; ++e)
                CHECK(rollout.data[l * T * T + e] == doctest::Approx(product[e]).epsilon(1e-6));
        }
    }
}

TEST_CASE("flow equals the brute-force minimum cut on small graphs") {
    for (auto [L, H, T, causal] : {std::tuple{3, 2, 3, true}, std::tuple{2, 3, 4, false}, std::tuple{3, 1, 4, true},
                                   std::tuple{1, 2, 1, true}}) {
        INFO("L " << L << " H " << H << " T " << T << " causal " << causal);
        std::vector<Tensor> maps;
        for (int l = 0; l < L; ++l) maps.push_back(random_maps(H, T, causal));
        const Tensor flow = attention_flow(pointers(maps));
        REQUIRE(flow.shape == std::vector<int64_t>{L, T, T});
        for (int64_t l = 0; l < L; ++l)
            for (int64_t i = 0; i < T; ++i)
                for (int64_t j = 0; j < T; ++j) {
                    const double expected = brute_force_flow(maps, l, i, j);
                    CHECK(flow.data[(l * T + i) * T + j] == doctest::Approx(expected).epsilon(1e-6));
                    if (causal && j > i) CHECK(expected == 0.0);
                    if (l == 0)
                        CHECK(expected == doctest::Approx(residual_entry(maps[0], i, j)).epsilon(1e-9));  // one edge
                }
    }
}

TEST_CASE("max flow: a graph where the greedy path must be undone") {
    // s=0 -> 1 -> 3=t and 0 -> 2 -> 3 with the cross edge 1 -> 2: the first BFS path may use the
    // cross edge; the answer 2 needs the residual edge 2 -> 1.
    MaxFlow graph(4);
    graph.add_edge(0, 1, 1), graph.add_edge(0, 2, 1), graph.add_edge(1, 2, 1), graph.add_edge(1, 3, 1),
        graph.add_edge(2, 3, 1);
    CHECK(graph.solve(0, 3) == 2.0);
    CHECK(graph.solve(0, 3) == 2.0);  // flows reset between calls
    CHECK(graph.solve(3, 0) == 0.0);
    CHECK(graph.solve(1, 1) == 0.0);
}

}  // TEST_SUITE("rollout")
