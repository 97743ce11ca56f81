// Mutual information and linear CKA between heads against plain double-precision references,
// on random outputs and choices and on planted cases with known answers.
#include <cmath>
#include <map>

#include <doctest/doctest.h>

#include "analysis_fixtures.hpp"
#include "attention_choice_mi.hpp"
#include "output_dependence.hpp"

using namespace attn_viz;
using namespace analysis_fixtures;

namespace {

using Matrix = std::vector<std::vector<double>>;

// ln det of a symmetric positive definite matrix by Gaussian elimination without pivoting.
double log_det(Matrix m) {
    double sum = 0;
    const size_t n = m.size();
    for (size_t k = 0; k < n; ++k) {
        REQUIRE(m[k][k] > 0);
        sum += std::log(m[k][k]);
        for (size_t i = k + 1; i < n; ++i) {
            const double f = m[i][k] / m[k][k];
            for (size_t j = k; j < n; ++j) m[i][j] -= f * m[k][j];
        }
    }
    return sum;
}

// Head n's centred outputs over the tokens, [T][d], from context [T, H*d].
Matrix centred_head(const Tensor& context, int64_t n, int64_t d) {
    const int64_t T = context.dim(0), C = context.dim(1);
    Matrix x(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(d)));
    for (int64_t k = 0; k < d; ++k) {
        double mean = 0;
        for (int64_t t = 0; t < T; ++t) mean += context.data[t * C + n * d + k];
        mean /= static_cast<double>(T);
        for (int64_t t = 0; t < T; ++t) x[t][k] = context.data[t * C + n * d + k] - mean;
    }
    return x;
}

Matrix cross(const Matrix& x, const Matrix& y) {
    Matrix c(x[0].size(), std::vector<double>(y[0].size(), 0.0));
    for (size_t t = 0; t < x.size(); ++t)
        for (size_t r = 0; r < x[0].size(); ++r)
            for (size_t s = 0; s < y[0].size(); ++s) c[r][s] += x[t][r] * y[t][s];
    return c;
}

double frobenius2(const Matrix& m) {
    double s = 0;
    for (const auto& row : m)
        for (double v : row) s += v * v;
    return s;
}

// Gaussian MI with the ridge, as determinants: with A = S_aa + l_a I and B = S_bb + l_b I,
// -1/2 (ln det [[A, S_ab], [S_ba, B]] - ln det A - ln det B); and linear CKA.
struct DependenceReference {
    double mi, cka;
};
DependenceReference reference_dependence(const Tensor& context, int64_t a, int64_t b, int64_t d) {
    const Matrix x = centred_head(context, a, d), y = centred_head(context, b, d);
    Matrix saa = cross(x, x), sbb = cross(y, y);
    const Matrix sab = cross(x, y);
    const double cka = frobenius2(sab) / std::sqrt(frobenius2(saa) * frobenius2(sbb));
    double trace_a = 0, trace_b = 0;
    for (int64_t k = 0; k < d; ++k) trace_a += saa[k][k], trace_b += sbb[k][k];
    for (int64_t k = 0; k < d; ++k)
        saa[k][k] += output_mi_ridge * trace_a / d, sbb[k][k] += output_mi_ridge * trace_b / d;
    Matrix joint(static_cast<size_t>(2 * d), std::vector<double>(static_cast<size_t>(2 * d)));
    for (int64_t r = 0; r < d; ++r)
        for (int64_t s = 0; s < d; ++s)
            joint[r][s] = saa[r][s], joint[d + r][d + s] = sbb[r][s], joint[r][d + s] = joint[d + s][r] = sab[r][s];
    return {-0.5 * (log_det(joint) - log_det(saa) - log_det(sbb)), cka};
}

// A random layer whose context is random outputs of `heads` heads of width d over T tokens.
LayerResult layer_with_outputs(int64_t heads, int64_t T, int64_t d) {
    LayerResult r = random_layer({heads, T, T, 4, false, 0.0});
    r.context = test_support::random_tensor({T, heads * d});
    return r;
}

// MI of two heads' strongest keys over the rows: plug-in plus Miller-Madow, counted with maps.
double reference_choice_mi(const std::vector<const LayerResult*>& layers, int64_t a, int64_t b) {
    const int64_t H = layers[0]->attention.dim(0), T = layers[0]->attention.dim(1), S = layers[0]->attention.dim(2);
    auto choice = [&](int64_t head, int64_t i) {
        const float* row = layers[head / H]->attention.ptr() + ((head % H) * T + i) * S;
        int64_t best = 0;
        for (int64_t j = 1; j < S; ++j)
            if (row[j] > row[best]) best = j;
        return best;
    };
    std::map<int64_t, double> pa, pb;
    std::map<std::pair<int64_t, int64_t>, double> pab;
    double n = 0;
    for (int64_t i = 0; i < T; ++i) {
        if (layers[0]->visibility.visible_count(i) == 0) continue;
        const int64_t x = choice(a, i), y = choice(b, i);
        pa[x] += 1, pb[y] += 1, pab[{x, y}] += 1, n += 1;
    }
    double mi = 0;
    for (const auto& [xy, count] : pab) mi += count / n * std::log(count * n / (pa[xy.first] * pb[xy.second]));
    return mi + (double(pa.size()) + double(pb.size()) - double(pab.size()) - 1) / (2 * n);
}

}  // namespace

TEST_SUITE("analysis") {

TEST_CASE("Gaussian output MI and linear CKA match a double-precision reference") {
    OnednnBackend backend;
    struct Shape {
        int64_t heads, T, d;
    };
    // T well above 2d, T below d (rank deficient: only the ridge keeps it finite), one head, odd
    // sizes, either side of the switch between the feature-space and the token-space forms.
    const std::vector<Shape> shapes = {Shape{3, 40, 4}, Shape{2, 5, 8}, Shape{1, 9, 3},  Shape{4, 17, 5},
                                       Shape{2, 2, 3},  Shape{3, 8, 5}, Shape{2, 10, 5}, Shape{1, 3, 7}};
    int token_space = 0;
    for (const Shape& s : shapes) token_space += output_dependence_in_token_space(s.T, s.d);
    REQUIRE(token_space >= 3);  // both forms are exercised
    REQUIRE(token_space <= static_cast<int>(shapes.size()) - 3);
    for (const Shape& s : shapes) {
        CAPTURE(s.heads);
        CAPTURE(s.T);
        CAPTURE(s.d);
        const LayerResult r = layer_with_outputs(s.heads, s.T, s.d);
        const OutputDependence dep = output_dependence({&r}, backend, 2);
        for (int64_t a = 0; a < s.heads; ++a)
            for (int64_t b = 0; b < s.heads; ++b) {
                const DependenceReference ref = reference_dependence(r.context, a, b, s.d);
                CHECK(dep.gaussian_mi.at(a, b) == doctest::Approx(ref.mi).epsilon(1e-3));
                CHECK(dep.linear_cka.at(a, b) == doctest::Approx(ref.cka).epsilon(1e-4));
            }
    }
}

TEST_CASE("output MI and CKA: identical heads are maximal, layers apart and constant outputs undefined") {
    OnednnBackend backend;
    const int64_t H = 3;
    for (const auto& [T, d] : {std::pair<int64_t, int64_t>{30, 4}, {6, 8}}) {  // both forms
        CAPTURE(T);
        LayerResult first = layer_with_outputs(H, T, d), second = layer_with_outputs(H, T, d);
        for (int64_t t = 0; t < T; ++t)
            for (int64_t k = 0; k < d; ++k)
                first.context.data[t * H * d + 2 * d + k] = first.context.data[t * H * d + k];
        for (int64_t t = 0; t < T; ++t)  // head 1 of the second layer is constant
            for (int64_t k = 0; k < d; ++k) second.context.data[t * H * d + d + k] = 0.5f;
        const OutputDependence dep = output_dependence({&first, &second}, backend, 2);
        CHECK(dep.linear_cka.at(0, 2) == doctest::Approx(1.0).epsilon(1e-6));
        CHECK(dep.gaussian_mi.at(0, 2) == doctest::Approx(dep.gaussian_mi.at(0, 0)).epsilon(1e-4));
        // With fewer tokens than dimensions (T = 6, d = 8) the ridge decides every pair's MI and two
        // random heads can share more than a head with itself; only a sampled covariance orders them.
        if (T > 2 * d) CHECK(dep.gaussian_mi.at(0, 2) > dep.gaussian_mi.at(0, 1));
        CHECK(std::isnan(dep.gaussian_mi.at(0, 3)));  // different layers
        CHECK(std::isnan(dep.linear_cka.at(1, 4)));
        CHECK(std::isnan(dep.gaussian_mi.at(3, 4)));  // a constant output
        CHECK(std::isnan(dep.linear_cka.at(4, 4)));
        CHECK(std::isfinite(dep.gaussian_mi.at(3, 5)));
    }
    // One token: nothing varies, nothing is defined.
    const LayerResult single = layer_with_outputs(2, 1, 3);
    const OutputDependence one = output_dependence({&single}, backend, 2);
    CHECK(std::isnan(one.gaussian_mi.at(0, 1)));
    CHECK(std::isnan(one.linear_cka.at(0, 0)));
}

TEST_CASE("output MI of correlated Gaussian outputs is -1/2 ln(1 - rho^2) up to the ridge") {
    OnednnBackend backend;
    const int64_t T = 4000;
    const double rho = 0.8;
    LayerResult r = layer_with_outputs(2, T, 1);
    std::normal_distribution<double> normal;
    for (int64_t t = 0; t < T; ++t) {
        const double x = normal(test_support::rng());
        r.context.data[t * 2] = static_cast<float>(x);
        r.context.data[t * 2 + 1] =
            static_cast<float>(rho * x + std::sqrt(1 - rho * rho) * normal(test_support::rng()));
    }
    const double shrunk = rho / (1 + output_mi_ridge);  // one dimension: each variance grows by the ridge
    CHECK(output_dependence({&r}, backend, 2).gaussian_mi.at(0, 1) ==
          doctest::Approx(-0.5 * std::log(1 - shrunk * shrunk)).epsilon(0.1));
}

TEST_CASE("choice MI matches a double-precision plug-in + Miller-Madow reference") {
    for (const RandomLayerShape& shape :
         {RandomLayerShape{3, 20, 20, 4, false, 0.0}, RandomLayerShape{2, 1, 1, 3, false, 0.0},
          RandomLayerShape{1, 7, 7, 3, true, 0.0}, RandomLayerShape{3, 13, 9, 3, false, 0.4},
          RandomLayerShape{2, 33, 33, 3, true, 0.2}}) {
        CAPTURE(shape.heads);
        CAPTURE(shape.queries);
        CAPTURE(shape.keys);
        const LayerResult first = random_layer(shape), second = random_layer(shape);
        std::vector<const LayerResult*> layers = {&first, &second};
        bool any_row = false;
        for (int64_t i = 0; i < shape.queries; ++i) any_row |= first.visibility.visible_count(i) > 0;
        const HeadMatrix mi = attention_choice_mi(layers, 2);
        for (int64_t a = 0; a < 2 * shape.heads; ++a)
            for (int64_t b = 0; b < 2 * shape.heads; ++b) {
                if (!any_row) {
                    CHECK(std::isnan(mi.at(a, b)));
                    continue;
                }
                CHECK(mi.at(a, b) == doctest::Approx(reference_choice_mi(layers, a, b)).epsilon(1e-12));
                CHECK(mi.at(a, b) <= mi.at(a, a) + 1e-12);
            }
    }
}

TEST_CASE("choice MI of two identical heads is the corrected entropy, of a constant head zero") {
    const int64_t T = 16;
    LayerResult r = random_layer({3, T, T, 3, false, 0.0});
    for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) {
            const float previous = j == (i + T - 1) % T ? 1.0f : 0.0f;
            r.attention.data[(0 * T + i) * T + j] = r.attention.data[(1 * T + i) * T + j] = previous;
            r.attention.data[(2 * T + i) * T + j] = j == 0 ? 1.0f : 0.0f;  // a sink: always key 0
        }
    const HeadMatrix mi = attention_choice_mi({&r});
    // 16 distinct choices, each once: H = ln 16, Miller-Madow adds 15 / 32.
    CHECK(mi.at(0, 1) == doctest::Approx(std::log(16.0) + 15.0 / 32).epsilon(1e-12));
    CHECK(mi.at(0, 0) == doctest::Approx(mi.at(0, 1)).epsilon(1e-12));
    CHECK(mi.at(0, 2) == doctest::Approx(0.0));
}

}  // TEST_SUITE("analysis")
