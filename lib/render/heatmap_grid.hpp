// The cells a heatmap shows: an optional window of the [T, S] weights, pooled (mean or max) into
// at most max_rows x max_cols cells when there are more tokens than pixels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "visibility.hpp"

namespace attn_viz {

enum class PoolMode { mean, max };

// "mean" or "max"; throws Error(usage) otherwise.
PoolMode parse_pool_mode(const std::string& text);

// Queries [q0, q1) x keys [k0, k1).
struct CellWindow {
    int64_t q0 = 0, q1 = 0, k0 = 0, k1 = 0;
};

// Parses "q0:q1,k0:k1" (non-negative integers, q0 < q1, k0 < k1); throws Error(usage,
// "window '<text>': ...") on anything else.
CellWindow parse_cell_window(const std::string& text);

// Throws Error(usage) when the window does not fit T queries x S keys.
void check_cell_window(const CellWindow& window, int64_t queries, int64_t keys);

struct CellGrid {
    int64_t rows = 0, cols = 0;
    std::vector<int64_t> row_edges;  // [rows + 1] query index where each cell row starts (+ end)
    std::vector<int64_t> col_edges;  // [cols + 1] key index where each cell column starts (+ end)
    std::vector<float> values;       // [rows, cols] pooled weight over the block's visible entries
    std::vector<uint8_t> masked;     // [rows, cols] 1 = no visible entry in the block

    float value(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * cols + c)]; }
    bool is_masked(int64_t r, int64_t c) const { return masked[static_cast<size_t>(r * cols + c)] != 0; }
    bool pooled() const;  // some cell covers more than one entry
};

// weights: [T, S] one head (T = visibility.queries, S = visibility.keys).
// Blocks are ceil(n / max_cells) tokens on a side (the last may be shorter); a block's value is
// the mean or the max of its visible entries, masked entries left out.
CellGrid build_cell_grid(const float* weights, const Visibility& visibility, const std::optional<CellWindow>& window,
                         int64_t max_rows, int64_t max_cols, PoolMode pool);

// values: [rows of the picture's data, columns] as the grid was built from. Marks masked every cell
// of `cells` whose block holds only NaN entries (values not computed: a pair across layers, a head
// not ablated), so that it is hatched instead of taking a color.
void mask_nan_cells(CellGrid& cells, const float* values, int64_t columns);

// --scale head: each head's map spans its own weight range; global: one range for all heads.
enum class ScaleMode { head, global };
ScaleMode parse_scale_mode(const std::string& text);  // throws Error(usage) for anything else

struct ValueRange {
    float vmin = 0.0f;
    float vmax = 1.0f;
};

// weights: [T, S]. Smallest and largest visible weight ([0, 1] when nothing is visible).
// For --scale head; --scale global takes the min/max of these over every head.
ValueRange visible_value_range(const float* weights, const Visibility& visibility);

}  // namespace attn_viz
