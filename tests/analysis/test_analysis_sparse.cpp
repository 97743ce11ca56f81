// Sparse-attention error per head against a plain double-precision reference, and planted heads
// with known answers.
#include <algorithm>
#include <cmath>
#include <numeric>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "head_analysis.hpp"
#include "sparse_attention_error.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;

namespace {

// A random layer with random values of `kv` key/value heads of width d.
LayerResult layer_with_values(const RandomLayerShape& shape, int64_t kv, int64_t d) {
    LayerResult r = random_layer(shape);
    r.values = test_support::random_tensor({kv, shape.keys, d});
    return r;
}

struct PatternReference {
    std::vector<double> mass_dropped, error;
};

// For each size: keep `kept(i, size)` of row i's visible keys, renormalise, compare with the
// full output, all in double.
template <class Keep>
PatternReference reference_pattern(const LayerResult& r, int64_t h, const std::vector<int64_t>& sizes, Keep kept) {
    const int64_t H = r.attention.dim(0), T = r.attention.dim(1), S = r.attention.dim(2);
    const int64_t KV = r.values.dim(0), d = r.values.dim(2), g = h / (H / KV);
    auto v = [&](int64_t j, int64_t k) { return double(r.values.data[(g * S + j) * d + k]); };
    PatternReference ref;
    for (int64_t size : sizes) {
        double dropped = 0, error2 = 0, norm2 = 0, rows = 0;
        for (int64_t i = 0; i < T; ++i) {
            const float* a = r.attention.ptr() + (h * T + i) * S;
            std::vector<int64_t> visible;
            for (int64_t j = 0; j < S; ++j)
                if (r.visibility.visible(i, j)) visible.push_back(j);
            if (visible.empty()) continue;
            const std::vector<int64_t> keep = kept(i, size, visible, a);
            double mass = 0, total = 0;
            for (int64_t j : visible) total += a[j];
            for (int64_t j : keep) mass += a[j];
            for (int64_t k = 0; k < d; ++k) {
                double full = 0, part = 0;
                for (int64_t j : visible) full += a[j] * v(j, k);
                for (int64_t j : keep) part += a[j] * v(j, k);
                const double approx = mass > 0 ? part / mass : 0.0;
                error2 += (full - approx) * (full - approx), norm2 += full * full;
            }
            dropped += total - mass, rows += 1;
        }
        ref.mass_dropped.push_back(dropped / rows);
        ref.error.push_back(std::sqrt(error2 / norm2));
    }
    return ref;
}

std::vector<int64_t> top_k(int64_t, int64_t k, std::vector<int64_t> visible, const float* a) {
    std::stable_sort(visible.begin(), visible.end(), [a](int64_t x, int64_t y) { return a[x] > a[y]; });
    visible.resize(static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(visible.size()))));
    return visible;
}

std::vector<int64_t> sink_and_window(int64_t i, int64_t w, const std::vector<int64_t>& visible, const float*) {
    std::vector<int64_t> keep;
    for (int64_t j : visible)
        if (j == 0 || std::abs(i - j) < w) keep.push_back(j);
    return keep;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("sparse_sizes: powers of two below S, then S") {
    CHECK(sparse_sizes(1) == std::vector<int64_t>{1});
    CHECK(sparse_sizes(2) == std::vector<int64_t>{1, 2});
    CHECK(sparse_sizes(9) == std::vector<int64_t>{1, 2, 4, 8, 9});
    CHECK(sparse_sizes(8) == std::vector<int64_t>{1, 2, 4, 8});
}

TEST_CASE("sparse-attention error matches a double-precision reference") {
    struct Case {
        RandomLayerShape shape;
        int64_t kv, d;
    };
    for (const Case& c : {Case{{4, 20, 20, 4, false, 0.0}, 2, 5}, Case{{1, 1, 1, 3, false, 0.0}, 1, 3},
                          Case{{3, 17, 17, 3, true, 0.0}, 3, 4}, Case{{2, 9, 13, 3, false, 0.3}, 1, 7},
                          Case{{2, 33, 33, 3, true, 0.1}, 2, 2}}) {
        CAPTURE(c.shape.heads);
        CAPTURE(c.shape.queries);
        CAPTURE(c.shape.keys);
        CAPTURE(c.shape.causal);
        const LayerResult r = layer_with_values(c.shape, c.kv, c.d);
        const double tolerance = 0.05;
        const std::vector<SparseHeadError> errors = sparse_attention_errors(r, tolerance, 2);
        const std::vector<int64_t> sizes = sparse_sizes(c.shape.keys);
        bool any_row = false;
        for (int64_t i = 0; i < c.shape.queries; ++i) any_row |= r.visibility.visible_count(i) > 0;
        if (!any_row) continue;
        for (int64_t h = 0; h < c.shape.heads; ++h) {
            CAPTURE(h);
            const SparseHeadError& e = errors[static_cast<size_t>(h)];
            const PatternReference top = reference_pattern(r, h, sizes, top_k);
            const PatternReference window = reference_pattern(r, h, sizes, sink_and_window);
            REQUIRE(e.top_k_error.size() == sizes.size());
            for (size_t m = 0; m < sizes.size(); ++m) {
                CHECK(e.top_k_mass_dropped[m] == doctest::Approx(top.mass_dropped[m]).epsilon(1e-5));
                CHECK(e.top_k_error[m] == doctest::Approx(top.error[m]).epsilon(1e-4));
                CHECK(e.window_mass_dropped[m] == doctest::Approx(window.mass_dropped[m]).epsilon(1e-5));
                CHECK(e.window_error[m] == doctest::Approx(window.error[m]).epsilon(1e-4));
            }
            // The smallest size within the tolerance, unless a reference error sits on the edge.
            const auto needed = [&](const std::vector<double>& error) {
                for (size_t m = 0; m < sizes.size(); ++m)
                    if (std::abs(error[m] - tolerance) < 1e-4)
                        return -1.0;
                    else if (error[m] <= tolerance)
                        return double(sizes[m]);
                return -1.0;
            };
            if (needed(top.error) > 0) CHECK(e.keys_needed == needed(top.error));
            if (needed(window.error) > 0) CHECK(e.window_needed == needed(window.error));
            CHECK(e.top_k_error.back() == 0.0);  // every key kept
            // The logit-margin bound holds on every row and bounds the mean mass.
            CHECK(e.top1_bound_holds == 1.0);
            CHECK(e.top_k_mass_dropped[0] <= e.top1_mass_bound + 1e-6);
            CHECK(e.top_k_error[0] <= e.top1_error_bound + 1e-6);
        }
    }
}

TEST_CASE("sparse-attention bound: the mean of (V-1)e^-m / (1 + (V-1)e^-m) over the rows") {
    const LayerResult r = layer_with_values({2, 11, 11, 3, true, 0.0}, 1, 3);
    const std::vector<SparseHeadError> errors = sparse_attention_errors(r, 0.05);
    for (int64_t h = 0; h < 2; ++h) {
        double sum = 0;
        for (int64_t i = 0; i < 11; ++i) {
            const double trailing =
                double(r.visibility.visible_count(i) - 1) * std::exp(-double(r.logit_margin.data[h * 11 + i]));
            sum += trailing / (1 + trailing);
        }
        CHECK(errors[static_cast<size_t>(h)].top1_mass_bound == doctest::Approx(sum / 11).epsilon(1e-9));
    }
}

TEST_CASE("a head attending one key has top-1 error 0 and needs one key; without values all is undefined") {
    const int64_t T = 12;
    LayerResult r = layer_with_values({2, T, T, 3, false, 0.0}, 2, 4);
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) r.attention.data[(1 * T + i) * T + j] = j == (i * 5) % T ? 1.0f : 0.0f;
    const std::vector<SparseHeadError> errors = sparse_attention_errors(r, 0.05);
    CHECK(errors[1].top_k_error[0] == 0.0);
    CHECK(errors[1].top_k_mass_dropped[0] == 0.0);
    CHECK(errors[1].keys_needed == 1.0);
    CHECK(errors[0].top_k_error[0] > 0.0);
    r.values = Tensor();
    const std::vector<SparseHeadError> none = sparse_attention_errors(r, 0.05);
    CHECK(std::isnan(none[0].keys_needed));
    CHECK(none[1].top_k_error.empty());
}

TEST_CASE("analyze_layer fills the sparse statistics and the dependence matrices") {
    LayerResult r = layer_with_values({3, 10, 10, 6, true, 0.0}, 3, 2);
    r.context = test_support::random_tensor({10, 6});
    AnalysisOptions options = analysis_fixtures::default_options();
    options.thresholds.sparse_tolerance = 0.2;
    CHECK(analyze_layer(r, nullptr, {}, options).sparse.empty());  // off by default
    CHECK(std::isnan(analyze_layer(r, nullptr, {}, options).heads[0].keys_needed));
    options.sparse_error = true;
    const ModelAnalysis a = analyze_layer(r, nullptr, {}, options);
    const std::vector<SparseHeadError> direct = sparse_attention_errors(r, 0.2);
    REQUIRE(a.sparse.size() == 3);
    for (size_t n = 0; n < 3; ++n) {
        CHECK(a.heads[n].keys_needed == direct[n].keys_needed);
        CHECK(a.heads[n].top1_error == direct[n].top_k_error[0]);
        CHECK(a.heads[n].top1_mass_dropped == doctest::Approx(1 - a.heads[n].confidence).epsilon(1e-5));
    }
    CHECK(a.matrix(PairMetric::output_cka).at(0, 0) == doctest::Approx(1.0));
    CHECK(a.matrix(PairMetric::choice_mi).at(1, 1) > 0);
}

}  // TEST_SUITE("analysis")
