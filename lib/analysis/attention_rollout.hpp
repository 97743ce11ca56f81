// Attention rollout and attention flow across layers (Abnar & Zuidema 2020, "Quantifying
// Attention Flow in Transformers"): how much each position after layer l draws on each input
// token, through every layer's attention with the residual connection.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tensor.hpp"

namespace attn_viz {

// maps: per layer, [H, T, T] self-attention weights (rows of hidden keys 0).
// The residual-augmented attention of each layer: Ã_l = 0.5 mean_h A_l,h + 0.5 I, rows
// renormalized to sum 1. Returns [L, T, T] in double.
std::vector<std::vector<double>> residual_attention(const std::vector<const Tensor*>& maps);

// Rollout: R_0 = Ã_0, R_l = Ã_l R_{l-1}. Returns [L, T, T]: row i of layer l is how much position i
// after layer l draws on each input token (each row sums to 1). O(L T^3).
Tensor attention_rollout(const std::vector<const Tensor*>& maps);

// Flow: the attention graph has a node per input token and per position after each layer, and an
// edge (l-1, j) -> (l, i) of capacity Ã_l[i, j]. flow[l, i, j] is the maximum flow from input
// token j to position i after layer l. Returns [L, T, T]. One max-flow problem per (l, i, j),
// solved with Dinic's algorithm on the (l+2)·T-node graph: at most L T^2 problems, each
// O(V^2 E) in the worst case with V = (l+2) T and E ≤ (l+1) T^2 (causal layers halve both).
// on_rows (optional): told after each row of a layer is solved, (rows done, L T rows in all).
Tensor attention_flow(const std::vector<const Tensor*>& maps,
                      const std::function<void(int64_t done, int64_t total)>& on_rows = {});

// Maximum flow from `source` to `sink` in a directed graph with non-negative real capacities
// (Dinic's algorithm). Exposed for the tests.
class MaxFlow {
public:
    explicit MaxFlow(int64_t nodes);
    void add_edge(int64_t from, int64_t to, double capacity);
    // The value of a maximum flow; every edge's flow is reset first, so it can be called again.
    double solve(int64_t source, int64_t sink);

private:
    struct Edge {
        int64_t to;
        double capacity, flow;
    };
    bool build_levels(int64_t source, int64_t sink);
    double push(int64_t node, int64_t sink, double limit);

    std::vector<Edge> edges_;                // edge 2k and its residual twin 2k+1
    std::vector<std::vector<int64_t>> out_;  // per node, its edges (and twins)
    std::vector<int64_t> level_, next_edge_;
};

}  // namespace attn_viz
