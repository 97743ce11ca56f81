#include "sparse_attention_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "error.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

// running += weight * value, over d numbers; compiled for AVX-512, AVX2 and baseline x86-64.
// __restrict: without it GCC checks at run time whether the two overlap and, when they lie within
// a vector of each other, takes a scalar loop that rounds differently (fused multiply-adds where
// the 8-wide part multiplies, then adds). Where the heap put `running` then decided the last bit
// of a head's top-1 error: the same inputs gave different numbers from run to run.
[[gnu::target_clones("avx512f", "avx2", "default")]] void add_scaled(float* __restrict running,
                                                                     const float* __restrict value, float weight,
                                                                     int64_t d) {
    for (int64_t r = 0; r < d; ++r) running[r] += weight * value[r];
}

// A key's place in the top-k order as one integer: the weight's bits above (a weight is never
// negative, so its bits order like it), the complement of the key index below (ties: lower index
// first). Larger sorts first.
uint64_t rank_key(float weight, int64_t key) {
    uint32_t bits;
    std::memcpy(&bits, &weight, sizeof bits);
    return (uint64_t(bits) << 32) | (0xffffffffu - static_cast<uint32_t>(key));
}
int64_t key_of(uint64_t rank) { return 0xffffffffu - static_cast<int64_t>(rank & 0xffffffffu); }

// One pattern's kept keys in one row, after each size: sum_j a_ij v_j, sum_j a_ij and how many keys.
struct KeptSums {
    int64_t d = 0;
    std::vector<float> sums;     // [sizes, d]
    std::vector<double> mass;    // [sizes]
    std::vector<int64_t> count;  // [sizes]
    std::vector<float> running;  // [d]
    double running_mass = 0;
    int64_t running_count = 0;

    KeptSums(size_t sizes, int64_t d_h)
        : d(d_h),
          sums(sizes * static_cast<size_t>(d_h)),
          mass(sizes),
          count(sizes),
          running(static_cast<size_t>(d_h)) {}
    void start() {
        std::fill(running.begin(), running.end(), 0.0f);
        running_mass = 0, running_count = 0;
    }
    // value: [d] v_j; weight: a_ij.
    void keep(const float* value, float weight) {
        add_scaled(running.data(), value, weight, d);
        running_mass += weight, ++running_count;
    }
    void snapshot(size_t size_index) {
        std::copy(running.begin(), running.end(), sums.begin() + static_cast<std::ptrdiff_t>(size_index * d));
        mass[size_index] = running_mass, count[size_index] = running_count;
    }
};

// Sums over the rows of one head for one pattern.
struct PatternTotals {
    std::vector<double> mass_dropped, squared_error;  // [sizes]
};

// Adds one row: for each size, the dropped mass and ||o - o~||^2 with o~ = kept sum / kept mass
// (0 when nothing with weight is kept). output: [d] the row's full output; total: its mass; visible: V_i.
void add_row(const KeptSums& kept, const float* output, double total, int64_t visible, PatternTotals& totals) {
    for (size_t m = 0; m < kept.mass.size(); ++m) {
        if (kept.count[m] == visible) continue;  // everything kept: nothing dropped, no error
        const float* sum = kept.sums.data() + m * kept.d;
        const double scale = kept.mass[m] > 0 ? 1.0 / kept.mass[m] : 0.0;
        double error = 0;
        for (int64_t r = 0; r < kept.d; ++r) error += std::pow(output[r] - sum[r] * scale, 2);
        totals.mass_dropped[m] += total - kept.mass[m];
        totals.squared_error[m] += error;
    }
}

// Means of the dropped mass, relative errors, and the smallest size within the tolerance.
void finish_pattern(const PatternTotals& totals, const std::vector<int64_t>& sizes, double rows, double output_norm2,
                    double tolerance, std::vector<double>& mass_dropped, std::vector<double>& error, double& needed) {
    needed = NAN;
    for (size_t m = 0; m < sizes.size(); ++m) {
        mass_dropped.push_back(rows > 0 ? totals.mass_dropped[m] / rows : NAN);
        error.push_back(output_norm2 > 0 ? std::sqrt(totals.squared_error[m] / output_norm2) : NAN);
        if (std::isnan(needed) && error.back() <= tolerance) needed = static_cast<double>(sizes[m]);
    }
}

// The bound's check on top-1 with a little room for float rounding.
bool within(double value, double bound, double scale) { return value <= bound * (1 + 1e-4) + 1e-6 * scale; }

// Head h: every row's patterns. values: [KV, S, d_h].
SparseHeadError head_error(const LayerResult& r, int64_t h, const std::vector<int64_t>& sizes, double tolerance) {
    const Visibility& vis = r.visibility;
    const int64_t H = r.attention.dim(0), T = r.attention.dim(1), S = r.attention.dim(2);
    const int64_t KV = r.values.dim(0), d = r.values.dim(2);
    const float* values = r.values.ptr() + (h / (H / KV)) * S * d;
    double largest_value = 0;  // max_j ||v_j||
    for (int64_t j = 0; j < S; ++j) {
        double norm2 = 0;
        for (int64_t k = 0; k < d; ++k) norm2 += double(values[j * d + k]) * values[j * d + k];
        largest_value = std::max(largest_value, std::sqrt(norm2));
    }
    KeptSums top(sizes.size(), d), window(sizes.size(), d);
    PatternTotals top_totals{std::vector<double>(sizes.size()), std::vector<double>(sizes.size())};
    PatternTotals window_totals = top_totals;
    double rows = 0, output_norm2 = 0, bound_sum = 0, error_bound2 = 0, holds = 0;
    std::vector<uint64_t> order;  // rank_key of the visible keys
    for (int64_t i = 0; i < T; ++i) {
        const float* a = r.attention.ptr() + (h * T + i) * S;
        order.clear();
        for (int64_t j = 0; j < S; ++j)
            if (vis.visible(i, j)) order.push_back(rank_key(a[j], j));
        const int64_t V = static_cast<int64_t>(order.size());
        if (V == 0) continue;
        // Top-k: the keys by weight (largest first, ties to the lower index), in dyadic bands.
        for (int64_t end = V, m = static_cast<int64_t>(sizes.size()) - 1; m >= 0; --m) {
            const int64_t k = std::min(sizes[m], V);
            if (k < end) std::nth_element(order.begin(), order.begin() + k, order.begin() + end, std::greater<>());
            end = k;
        }
        top.start();
        for (size_t m = 0, next = 0; m < sizes.size(); ++m) {
            for (; next < static_cast<size_t>(std::min(sizes[m], V)); ++next) {
                const int64_t j = key_of(order[next]);
                top.keep(values + j * d, a[j]);
            }
            top.snapshot(m);
        }
        const float* output = top.sums.data() + (sizes.size() - 1) * d;  // every key kept
        const double total = top.mass.back();
        // Sink + window: key 0, then the keys at distance 0, 1, 2, ... from i.
        const auto keep_in_window = [&](int64_t j) {
            if (j >= 1 && j < S && vis.visible(i, j)) window.keep(values + j * d, a[j]);
        };
        window.start();
        if (vis.visible(i, 0)) window.keep(values, a[0]);
        for (size_t m = 0; m < sizes.size(); ++m) {
            for (int64_t distance = m == 0 ? 0 : sizes[m - 1]; distance < sizes[m]; ++distance) {
                keep_in_window(i - distance);
                if (distance > 0) keep_in_window(i + distance);
            }
            window.snapshot(m);
        }
        add_row(top, output, total, V, top_totals);
        add_row(window, output, total, V, window_totals);
        // The bound on top-1: every dropped score trails the kept one by at least the margin.
        double output_norm2_i = 0, top_norm2 = 0;
        for (int64_t k = 0; k < d; ++k) {
            output_norm2_i += double(output[k]) * output[k];
            top_norm2 += double(values[key_of(order[0]) * d + k]) * values[key_of(order[0]) * d + k];
        }
        const double spread = largest_value + std::sqrt(top_norm2);  // >= ||v_j - v_top|| for every j
        const double trailing =
            static_cast<double>(V - 1) * std::exp(-static_cast<double>(r.logit_margin.data[h * T + i]));
        const double mass_bound = V > 1 ? trailing / (1 + trailing) : 0.0;
        double top1_error2 = 0;
        const float* top1 = top.sums.data();
        for (int64_t k = 0; k < d; ++k) top1_error2 += std::pow(output[k] - top1[k] / top.mass[0], 2);
        const bool kept_all = V == 1;
        holds += within(kept_all ? 0 : total - top.mass[0], mass_bound, 1) &&
                 within(kept_all ? 0 : std::sqrt(top1_error2), mass_bound * spread, spread);
        rows += 1, output_norm2 += output_norm2_i, bound_sum += mass_bound;
        error_bound2 += std::pow(mass_bound * spread, 2);
    }
    SparseHeadError e;
    finish_pattern(top_totals, sizes, rows, output_norm2, tolerance, e.top_k_mass_dropped, e.top_k_error,
                   e.keys_needed);
    finish_pattern(window_totals, sizes, rows, output_norm2, tolerance, e.window_mass_dropped, e.window_error,
                   e.window_needed);
    e.top1_mass_bound = rows > 0 ? bound_sum / rows : NAN;
    e.top1_error_bound = output_norm2 > 0 ? std::sqrt(error_bound2 / output_norm2) : NAN;
    e.top1_bound_holds = rows > 0 ? holds / rows : NAN;
    return e;
}

}  // namespace

std::vector<int64_t> sparse_sizes(int64_t keys) {
    std::vector<int64_t> sizes;
    for (int64_t k = 1; k < keys; k *= 2) sizes.push_back(k);
    sizes.push_back(keys);
    return sizes;
}

std::vector<SparseHeadError> sparse_attention_errors(const LayerResult& r, double tolerance, int threads) {
    const int64_t H = r.attention.rank() == 3 ? r.attention.dim(0) : 0;
    SparseHeadError undefined{{}, {}, {}, {}, NAN, NAN, NAN, NAN, NAN};
    std::vector<SparseHeadError> heads(static_cast<size_t>(H), undefined);
    if (r.values.rank() != 3 || H == 0) return heads;
    const int64_t KV = r.values.dim(0);
    if (KV == 0 || H % KV != 0 || r.values.dim(1) != r.attention.dim(2))
        throw Error(ErrorKind::internal, "sparse_attention_errors: values do not match the attention map");
    const std::vector<int64_t> sizes = sparse_sizes(r.attention.dim(2));
    parallel_for(
        H, threads, [&](int64_t h) { heads[static_cast<size_t>(h)] = head_error(r, h, sizes, tolerance); },
        r.attention.dim(1) * r.attention.dim(2) * static_cast<int64_t>(sizes.size()));
    return heads;
}

}  // namespace attn_viz
