// A square matrix of doubles indexed by head (all layers' heads, layer-major), with NaN marking
// entries that are undefined (written as null in stats.json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace attn_viz {

struct HeadMatrix {
    int64_t size = 0;            // N heads
    std::vector<double> values;  // [N, N] row-major

    HeadMatrix() = default;
    explicit HeadMatrix(int64_t n, double fill = std::numeric_limits<double>::quiet_NaN())
        : size(n), values(static_cast<size_t>(n * n), fill) {}
    double& at(int64_t a, int64_t b) { return values[static_cast<size_t>(a * size + b)]; }
    double at(int64_t a, int64_t b) const { return values[static_cast<size_t>(a * size + b)]; }
    bool empty() const { return values.empty(); }
};

}  // namespace attn_viz
