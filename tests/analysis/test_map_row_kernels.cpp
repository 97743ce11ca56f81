// The attention-map similarities' row kernels (sum_self_row, compare_rows, compare_rows_by_ratio)
// against double references, on random rows of every length around the sixteen-lane blocks.
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "map_row_kernels.hpp"
#include "support.hpp"

using namespace attn_viz;

namespace {

// A random probability row of `keys` entries; a share `zeros` of them exactly 0 (masked keys).
std::vector<float> random_row(int64_t keys, double zeros) {
    auto& rng = test_support::rng();
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<double> x(static_cast<size_t>(keys));
    double sum = 0;
    for (double& v : x) sum += v = unit(rng) < zeros ? 0.0 : std::exp(6.0 * unit(rng));
    std::vector<float> row(static_cast<size_t>(keys));
    for (size_t j = 0; j < row.size(); ++j) row[j] = sum > 0 ? static_cast<float>(x[j] / sum) : 0.0f;
    return row;
}

// JS divergence (bits) of two rows, in double.
double reference_divergence(const std::vector<float>& p, const std::vector<float>& q) {
    double js = 0;
    for (size_t j = 0; j < p.size(); ++j) {
        const double a = p[j], b = q[j], m = (a + b) / 2;
        if (a > 0) js += 0.5 * a * std::log2(a / m);
        if (b > 0) js += 0.5 * b * std::log2(b / m);
    }
    return js;
}

// JS divergence (bits) of two rows, in double, accurate for rows that nearly agree: per entry,
// with x = (a - b) / (a + b), a ln(a/m) + b ln(b/m) = a log1p(x) + b log1p(-x).
double reference_small_divergence(const std::vector<float>& p, const std::vector<float>& q) {
    double js = 0;
    for (size_t j = 0; j < p.size(); ++j) {
        const double a = p[j], b = q[j];
        if (a + b == 0) continue;
        const double x = (a - b) / (a + b);
        js += (a > 0 ? a * std::log1p(x) : 0.0) + (b > 0 ? b * std::log1p(-x) : 0.0);
    }
    return js / (2 * std::log(2.0));
}

// p with every entry moved by a relative amount of about `spread`, renormalized.
std::vector<float> nearby_row(const std::vector<float>& p, double spread) {
    std::normal_distribution<double> noise(0.0, spread);
    std::vector<double> x(p.size());
    double sum = 0;
    for (size_t j = 0; j < p.size(); ++j) sum += x[j] = p[j] * std::exp(noise(test_support::rng()));
    std::vector<float> row(p.size());
    for (size_t j = 0; j < p.size(); ++j) row[j] = static_cast<float>(x[j] / sum);
    return row;
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("row kernels match double references at every length around the lane blocks") {
    for (int64_t keys : {1, 2, 15, 16, 17, 31, 33, 100, 513}) {
        for (double zeros : {0.0, 0.3}) {
            CAPTURE(keys);
            CAPTURE(zeros);
            const std::vector<float> p = random_row(keys, zeros), q = random_row(keys, zeros);
            std::vector<float> p_ln_p(p.size()), q_ln_q(q.size());
            const RowSelf self = sum_self_row(p.data(), keys, p_ln_p.data());
            sum_self_row(q.data(), keys, q_ln_q.data());
            double square = 0, mass = 0, dot = 0;
            for (size_t j = 0; j < p.size(); ++j) {
                square += double(p[j]) * p[j], mass += p[j], dot += double(p[j]) * q[j];
                CHECK(p_ln_p[j] ==
                      doctest::Approx(p[j] > 0 ? p[j] * std::log(double(p[j])) : 0.0).epsilon(1e-6).scale(1e-7));
            }
            CHECK(self.square == doctest::Approx(square).epsilon(1e-6));
            CHECK(self.mass == doctest::Approx(mass).epsilon(1e-6));
            const double divergence = reference_divergence(p, q);
            const RowPair pair = compare_rows(p.data(), q.data(), p_ln_p.data(), q_ln_q.data(), keys);
            CHECK(pair.dot == doctest::Approx(dot).epsilon(1e-6));
            CHECK(std::abs(pair.divergence - divergence) < 1e-6);  // one-log form: absolute error
            const RowPair by_ratio = compare_rows_by_ratio(p.data(), q.data(), keys);
            CHECK(by_ratio.dot == doctest::Approx(dot).epsilon(1e-6));
            CHECK(by_ratio.divergence == doctest::Approx(divergence).epsilon(1e-5).scale(1e-12));
        }
    }
}

TEST_CASE("compare_rows_by_ratio is accurate relative to itself for rows that nearly agree") {
    // The ratio form's bracket ln 2 + r ln r + s ln s is about 2 (r - 1/2)^2 here: from logarithms
    // it would cancel to float noise (relative errors of 1e-1 at a spread of 1e-4). Small spreads
    // keep every entry's split within 1/4 : 3/4 (the series alone); at 0.5, and with one entry of
    // q made 5 times larger, some sixteen-entry groups take the logarithms too.
    for (int64_t keys : {1, 2, 17, 33, 100, 513})
        for (double spread : {0.5, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5})
            for (const bool one_wide : {false, true}) {
                CAPTURE(keys);
                CAPTURE(spread);
                CAPTURE(one_wide);
                const std::vector<float> p = random_row(keys, keys > 2 ? 0.2 : 0.0);
                std::vector<float> q = nearby_row(p, spread);
                if (one_wide) q[q.size() / 2] = 5.0f * q[q.size() / 2] + 1e-3f;
                const double expected = reference_small_divergence(p, q);
                CHECK(compare_rows_by_ratio(p.data(), q.data(), keys).divergence ==
                      doctest::Approx(expected).epsilon(1e-5).scale(1e-30));
                CHECK(compare_rows_by_ratio(q.data(), p.data(), keys).divergence ==
                      doctest::Approx(expected).epsilon(1e-5).scale(1e-30));
            }
}

TEST_CASE("row kernels: equal rows diverge by exactly 0, disjoint rows by exactly one bit") {
    for (int64_t keys : {1, 16, 37}) {
        CAPTURE(keys);
        const std::vector<float> p = random_row(keys, 0.0);
        std::vector<float> p_ln_p(p.size());
        sum_self_row(p.data(), keys, p_ln_p.data());
        CHECK(compare_rows(p.data(), p.data(), p_ln_p.data(), p_ln_p.data(), keys).divergence == 0.0);
        CHECK(compare_rows_by_ratio(p.data(), p.data(), keys).divergence == 0.0);
        // Disjoint supports: uniform on the first half against uniform on the rest.
        if (keys < 2) continue;
        std::vector<float> a(p.size(), 0.0f), b(p.size(), 0.0f);
        const int64_t half = keys / 2;
        for (int64_t j = 0; j < half; ++j) a[static_cast<size_t>(j)] = 1.0f / static_cast<float>(half);
        for (int64_t j = half; j < keys; ++j) b[static_cast<size_t>(j)] = 1.0f / static_cast<float>(keys - half);
        std::vector<float> a_ln_a(a.size()), b_ln_b(b.size());
        sum_self_row(a.data(), keys, a_ln_a.data());
        sum_self_row(b.data(), keys, b_ln_b.data());
        CHECK(compare_rows(a.data(), b.data(), a_ln_a.data(), b_ln_b.data(), keys).divergence ==
              doctest::Approx(1.0).epsilon(1e-6));
        CHECK(compare_rows_by_ratio(a.data(), b.data(), keys).divergence == doctest::Approx(1.0).epsilon(1e-6));
    }
}

}  // TEST_SUITE("analysis")
