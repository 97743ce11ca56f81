// Windowing and pooling of one head's weights into display cells (see heatmap_grid.hpp).
#include "heatmap_grid.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "error.hpp"

namespace attn_viz {

PoolMode parse_pool_mode(const std::string& text) {
    if (text == "mean") return PoolMode::mean;
    if (text == "max") return PoolMode::max;
    throw Error(ErrorKind::usage, fmt::format("unknown pooling mode '{}' (choose mean or max)", text));
}

ScaleMode parse_scale_mode(const std::string& text) {
    if (text == "head") return ScaleMode::head;
    if (text == "global") return ScaleMode::global;
    throw Error(ErrorKind::usage, fmt::format("unknown color scale '{}' (choose head or global)", text));
}

namespace {

[[noreturn]] void bad_window(const std::string& text, const std::string& what) {
    throw Error(ErrorKind::usage, fmt::format("window '{}': {}", text, what));
}

// "a:b" -> {a, b}
std::pair<int64_t, int64_t> parse_range(const std::string& whole, const std::string& part, const char* axis) {
    const size_t colon = part.find(':');
    if (colon == std::string::npos)
        bad_window(whole, fmt::format("expected q0:q1,k0:k1, the {} range has no ':'", axis));
    auto number = [&](const std::string& digits) {
        int64_t value = 0;
        const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < 0)
            bad_window(whole, fmt::format("the {} range needs two non-negative integers, got '{}'", axis, part));
        return value;
    };
    const int64_t first = number(part.substr(0, colon)), last = number(part.substr(colon + 1));
    if (first >= last) bad_window(whole, fmt::format("the {} range {} is empty (need start < end)", axis, part));
    return {first, last};
}

// Block edges for n tokens starting at `first` in at most max_cells blocks.
std::vector<int64_t> block_edges(int64_t first, int64_t n, int64_t max_cells) {
    const int64_t block = (n + std::max<int64_t>(max_cells, 1) - 1) / std::max<int64_t>(max_cells, 1);
    std::vector<int64_t> edges;
    for (int64_t at = 0; at < n; at += block) edges.push_back(first + at);
    edges.push_back(first + n);
    return edges;
}

}  // namespace

CellWindow parse_cell_window(const std::string& text) {
    const size_t comma = text.find(',');
    if (comma == std::string::npos) bad_window(text, "expected q0:q1,k0:k1 (query range, comma, key range)");
    const auto [q0, q1] = parse_range(text, text.substr(0, comma), "query");
    const auto [k0, k1] = parse_range(text, text.substr(comma + 1), "key");
    return {q0, q1, k0, k1};
}

void check_cell_window(const CellWindow& window, int64_t queries, int64_t keys) {
    const std::string text = fmt::format("{}:{},{}:{}", window.q0, window.q1, window.k0, window.k1);
    if (window.q1 > queries) bad_window(text, fmt::format("query range ends past the {} queries", queries));
    if (window.k1 > keys) bad_window(text, fmt::format("key range ends past the {} keys", keys));
}

bool CellGrid::pooled() const {
    return row_edges.back() - row_edges.front() > rows || col_edges.back() - col_edges.front() > cols;
}

namespace {

// weights: [T, S] one head. Per key of the area: the total (mean) or largest weight (max) over
// query rows [i0, i1) into pooled, and how many of those rows see it into counts, both
// [k1 - k0]. Plain loops over contiguous keys that the compiler vectorizes; padding keys are
// counted too (pool_blocks skips them: a key is padding for every query or for none).
void pool_keys(const float* weights, const Visibility& visibility, const CellWindow& area, int64_t i0, int64_t i1,
               bool mean, float* pooled, int32_t* counts) {
    const int64_t span = area.k1 - area.k0;
    std::fill(pooled, pooled + span, mean ? 0.0f : -std::numeric_limits<float>::infinity());
    std::fill(counts, counts + span, 0);
    for (int64_t i = i0; i < i1; ++i) {
        const float* row = weights + i * visibility.keys + area.k0;
        // Keys [first, seen) of the area: past a sliding window's start, before the causal end.
        const int64_t first = std::clamp<int64_t>(visibility.visible_begin(i) - area.k0, 0, span);
        const int64_t seen = std::clamp<int64_t>(visibility.visible_end(i) - area.k0, 0, span);
        if (mean)
            for (int64_t j = first; j < seen; ++j) pooled[j] += row[j];
        else
            for (int64_t j = first; j < seen; ++j) pooled[j] = row[j] > pooled[j] ? row[j] : pooled[j];
        for (int64_t j = first; j < seen; ++j) ++counts[j];
    }
}

// Block row r of the grid from its keys' pool_keys() results, padding keys left out; a block
// with nothing visible stays masked.
void pool_blocks(CellGrid& grid, int64_t r, const float* pooled, const int32_t* counts, const Visibility& visibility,
                 int64_t k0, bool mean) {
    const uint8_t* excluded = visibility.key_excluded.empty() ? nullptr : visibility.key_excluded.data();
    for (int64_t c = 0; c < grid.cols; ++c) {
        double sum = 0.0;
        float largest = -std::numeric_limits<float>::infinity();
        int64_t count = 0;
        const int64_t j0 = grid.col_edges[static_cast<size_t>(c)] - k0,
                      j1 = grid.col_edges[static_cast<size_t>(c + 1)] - k0;
        for (int64_t j = j0; j < j1; ++j) {
            if (excluded && excluded[k0 + j]) continue;
            sum += pooled[j];
            largest = std::max(largest, pooled[j]);
            count += counts[j];
        }
        if (count == 0) continue;
        const size_t at = static_cast<size_t>(r * grid.cols + c);
        grid.masked[at] = 0;
        grid.values[at] = mean ? static_cast<float>(sum / count) : largest;
    }
}

}  // namespace

CellGrid build_cell_grid(const float* weights, const Visibility& visibility, const std::optional<CellWindow>& window,
                         int64_t max_rows, int64_t max_cols, PoolMode pool) {
    // Step 1: the rectangle to show, whole map unless windowed.
    CellWindow area{0, visibility.queries, 0, visibility.keys};
    if (window) {
        check_cell_window(*window, visibility.queries, visibility.keys);
        area = *window;
    }
    // Step 2: block boundaries on each axis.
    CellGrid grid;
    grid.row_edges = block_edges(area.q0, area.q1 - area.q0, max_rows);
    grid.col_edges = block_edges(area.k0, area.k1 - area.k0, max_cols);
    grid.rows = static_cast<int64_t>(grid.row_edges.size()) - 1;
    grid.cols = static_cast<int64_t>(grid.col_edges.size()) - 1;
    grid.values.assign(static_cast<size_t>(grid.rows * grid.cols), 0.0f);
    grid.masked.assign(static_cast<size_t>(grid.rows * grid.cols), 1);
    // Step 3: pool each block row over its visible entries: first each key over the block's
    // rows, then each block from its keys.
    const bool mean = pool == PoolMode::mean;
    std::vector<float> key_pooled(static_cast<size_t>(area.k1 - area.k0));
    std::vector<int32_t> key_counts(key_pooled.size());
    for (int64_t r = 0; r < grid.rows; ++r) {
        pool_keys(weights, visibility, area, grid.row_edges[static_cast<size_t>(r)],
                  grid.row_edges[static_cast<size_t>(r + 1)], mean, key_pooled.data(), key_counts.data());
        pool_blocks(grid, r, key_pooled.data(), key_counts.data(), visibility, area.k0, mean);
    }
    return grid;
}

void mask_nan_cells(CellGrid& cells, const float* values, int64_t columns) {
    for (int64_t r = 0; r < cells.rows; ++r)
        for (int64_t c = 0; c < cells.cols; ++c) {
            bool any_value = false;
            for (int64_t i = cells.row_edges[static_cast<size_t>(r)];
                 i < cells.row_edges[static_cast<size_t>(r + 1)] && !any_value; ++i)
                for (int64_t j = cells.col_edges[static_cast<size_t>(c)];
                     j < cells.col_edges[static_cast<size_t>(c + 1)] && !any_value; ++j)
                    any_value = !std::isnan(values[i * columns + j]);
            if (!any_value) cells.masked[static_cast<size_t>(r * cells.cols + c)] = 1;
        }
}

namespace {

// Running minimum and maximum of some floats, kept in `lanes` independent lanes so the compiler
// turns each step into vector compares and blends. NaNs never replace a bound (as std::min/max).
struct MinMaxLanes {
    static constexpr int lanes = 16;
    float low[lanes], high[lanes];

    MinMaxLanes() {
        std::fill(low, low + lanes, std::numeric_limits<float>::infinity());
        std::fill(high, high + lanes, -std::numeric_limits<float>::infinity());
    }
    // values: [n]
    void add(const float* values, int64_t n) {
        int64_t j = 0;
        for (; j + lanes <= n; j += lanes)
            for (int k = 0; k < lanes; ++k) {
                const float v = values[j + k];
                low[k] = v < low[k] ? v : low[k];
                high[k] = v > high[k] ? v : high[k];
            }
        for (; j < n; ++j) low[0] = std::min(low[0], values[j]), high[0] = std::max(high[0], values[j]);
    }
    void add(float value) { low[0] = std::min(low[0], value), high[0] = std::max(high[0], value); }
    ValueRange range() const {
        const float least = *std::min_element(low, low + lanes), most = *std::max_element(high, high + lanes);
        if (least > most) return {};
        return {least, most};
    }
};

}  // namespace

ValueRange visible_value_range(const float* weights, const Visibility& visibility) {
    MinMaxLanes bounds;
    const uint8_t* excluded = visibility.key_excluded.empty() ? nullptr : visibility.key_excluded.data();
    for (int64_t i = 0; i < visibility.queries; ++i) {
        const float* row = weights + i * visibility.keys;
        const int64_t begin = visibility.visible_begin(i), end = visibility.visible_end(i);
        if (excluded) {
            for (int64_t j = begin; j < end; ++j)
                if (!excluded[j]) bounds.add(row[j]);
        } else if (end > begin) {
            bounds.add(row + begin, end - begin);
        }
    }
    return bounds.range();
}

}  // namespace attn_viz
