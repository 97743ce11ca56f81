// Composition scores against the formula in double on explicit D x D matrices (random layers with
// grouped key/value heads, RMSNorm and LayerNorm folding), and a planted previous-token head
// whose output only an induction head's keys read: K-composition, no Q- or V-composition; the
// chance level against a Monte-Carlo estimate over random Gaussian weights.
#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "composition_scores.hpp"
#include "support.hpp"

using namespace attn_viz;
using namespace test_support;

namespace {

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

Matrix product(const Matrix& a, const Matrix& b) {
    Matrix c(a.size(), std::vector<double>(b[0].size(), 0.0));
    for (size_t i = 0; i < a.size(); ++i)
        for (size_t k = 0; k < b.size(); ++k)
            for (size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
    return c;
}

Matrix transpose(const Matrix& a) {
    Matrix t(a[0].size(), std::vector<double>(a.size()));
    for (size_t i = 0; i < a.size(); ++i)
        for (size_t j = 0; j < a[0].size(); ++j) t[j][i] = a[i][j];
    return t;
}

double frobenius(const Matrix& a) {
    double sum = 0;
    for (const auto& row : a)
        for (double x : row) sum += x * x;
    return std::sqrt(sum);
}

// Columns [first, first + d) of w [D, n], rows scaled by `weight` (if any), centred over D (if asked).
Matrix reader(const Tensor& w, int64_t first, int64_t d, const Tensor* weight, bool center) {
    const int64_t D = w.dim(0), n = w.dim(1);
    Matrix m(static_cast<size_t>(D), std::vector<double>(static_cast<size_t>(d)));
    for (int64_t i = 0; i < D; ++i)
        for (int64_t j = 0; j < d; ++j) m[i][j] = w.data[i * n + first + j] * (weight ? weight->data[i] : 1.0f);
    if (center)
        for (int64_t j = 0; j < d; ++j) {
            double mean = 0;
            for (int64_t i = 0; i < D; ++i) mean += m[i][j] / static_cast<double>(D);
            for (int64_t i = 0; i < D; ++i) m[i][j] -= mean;
        }
    return m;
}

// Rows [first, first + d) of w_o [H d_h, D], each centred (if asked).
Matrix writer(const Tensor& w_o, int64_t first, int64_t d, bool center) {
    const int64_t D = w_o.dim(1);
    Matrix m(static_cast<size_t>(d), std::vector<double>(static_cast<size_t>(D)));
    for (int64_t r = 0; r < d; ++r) {
        double mean = 0;
        for (int64_t i = 0; i < D; ++i) mean += w_o.data[(first + r) * D + i] / static_cast<double>(D);
        for (int64_t i = 0; i < D; ++i) m[r][i] = w_o.data[(first + r) * D + i] - (center ? mean : 0.0);
    }
    return m;
}

LayerWeights random_attention(int64_t D, int64_t H, int64_t KV, int64_t d) {
    LayerWeights w;
    w.d_model = D, w.num_heads = H, w.num_kv_heads = KV, w.d_head = d;
    w.w_q = random_tensor({D, H * d}), w.w_k = random_tensor({D, KV * d}), w.w_v = random_tensor({D, KV * d});
    w.w_o = random_tensor({H * d, D});
    return w;
}

}  // namespace

TEST_CASE("composition scores match ||OV_a R_b||_F / (||OV_a||_F ||R_b||_F) on the folded D x D matrices") {
    OnednnBackend backend;
    struct Shape {
        int64_t D, H, KV, d, L;
        bool center;
    };
    for (const Shape& s : {Shape{12, 4, 2, 3, 3, false}, Shape{7, 1, 1, 5, 2, true}, Shape{16, 4, 1, 4, 2, true}}) {
        INFO("D " << s.D << " H " << s.H << " KV " << s.KV << " d " << s.d << " center " << s.center);
        std::vector<LayerWeights> layers;
        NormFolding folding;
        folding.center = s.center;
        for (int64_t l = 0; l < s.L; ++l)
            layers.push_back(random_attention(s.D, s.H, s.KV, s.d)), folding.weights.push_back(random_tensor({s.D}));
        std::vector<const LayerWeights*> pointers;
        for (const LayerWeights& w : layers) pointers.push_back(&w);
        const CompositionScores scores = composition_scores(pointers, folding, backend);
        const int64_t N = s.L * s.H, group = s.H / s.KV;
        for (int64_t a = 0; a < N; ++a)
            for (int64_t b = 0; b < N; ++b) {
                const int64_t la = a / s.H, ha = a % s.H, lb = b / s.H, hb = b % s.H;
                if (lb <= la) {
                    for (const Tensor& kind : scores.scores) CHECK(std::isnan(kind.data[a * N + b]));
                    continue;
                }
                const LayerWeights &wa = layers[la], &wb = layers[lb];
                const Tensor *na = &folding.weights[la], *nb = &folding.weights[lb];
                const Matrix ov_a = product(reader(wa.w_v, (ha / group) * s.d, s.d, na, s.center),
                                            writer(wa.w_o, ha * s.d, s.d, s.center));
                const Matrix q = reader(wb.w_q, hb * s.d, s.d, nb, s.center),
                             k = reader(wb.w_k, (hb / group) * s.d, s.d, nb, s.center);
                const Matrix qk = product(q, transpose(k)), kq = transpose(qk);
                const Matrix ov_b = product(reader(wb.w_v, (hb / group) * s.d, s.d, nb, s.center),
                                            writer(wb.w_o, hb * s.d, s.d, s.center));
                const Matrix* rights[3] = {&qk, &kq, &ov_b};
                for (int kind = 0; kind < 3; ++kind) {
                    const double expected =
                        frobenius(product(ov_a, *rights[kind])) / (frobenius(ov_a) * frobenius(*rights[kind]));
                    CHECK(scores.scores[kind].data[a * N + b] == doctest::Approx(expected).epsilon(1e-4));
                }
            }
    }
}

TEST_CASE("a planted previous-token head feeding an induction head's keys shows K-composition only") {
    // D = 16: L0H0 reads dims 0-3 and writes dims 8-11 (its OV an isometry of rank 4); L1H1's keys
    // read dims 8-11, its queries dims 12-15. Every other head reads and writes dims 4-7 only.
    OnednnBackend backend;
    const int64_t D = 16, d = 4;
    std::vector<LayerWeights> layers(2);
    for (LayerWeights& w : layers) {
        w.d_model = D, w.num_heads = 2, w.num_kv_heads = 2, w.d_head = d;
        w.w_q = Tensor({D, 2 * d}), w.w_k = Tensor({D, 2 * d}), w.w_v = Tensor({D, 2 * d}), w.w_o = Tensor({2 * d, D});
        for (int64_t i = 0; i < d; ++i) {  // head 1 of layer 0 and head 0 of layer 1: dims 4-7
            const int64_t h = &w == &layers[0] ? 1 : 0;
            w.w_q.data[(4 + i) * 2 * d + h * d + i] = 1, w.w_k.data[(4 + i) * 2 * d + h * d + i] = 1;
            w.w_v.data[(4 + i) * 2 * d + h * d + i] = 1, w.w_o.data[(h * d + i) * D + 4 + i] = 1;
        }
    }
    for (int64_t i = 0; i < d; ++i) {
        layers[0].w_v.data[i * 2 * d + i] = 1, layers[0].w_o.data[i * D + 8 + i] = 1;  // L0H0: dims 0-3 -> 8-11
        layers[0].w_q.data[i * 2 * d + i] = 1, layers[0].w_k.data[i * 2 * d + i] = 1;
        layers[1].w_k.data[(8 + i) * 2 * d + d + i] = 1, layers[1].w_q.data[(12 + i) * 2 * d + d + i] = 1;  // L1H1
        layers[1].w_v.data[(12 + i) * 2 * d + d + i] = 1, layers[1].w_o.data[(d + i) * D + 12 + i] = 1;
    }
    const CompositionScores scores = composition_scores({&layers[0], &layers[1]}, {}, backend);
    const int64_t previous = 0, induction = 3, N = 4;
    // A rank-4 isometry composed with another: ||P R|| / (||P|| ||R||) = 2 / (2 * 2).
    CHECK(scores.of(CompositionKind::k).data[previous * N + induction] == doctest::Approx(0.5));
    CHECK(scores.of(CompositionKind::q).data[previous * N + induction] == 0.0f);
    CHECK(scores.of(CompositionKind::v).data[previous * N + induction] == 0.0f);
    // The heads on dims 4-7 compose with each other in all three ways, and with nothing else.
    for (CompositionKind kind : {CompositionKind::q, CompositionKind::k, CompositionKind::v}) {
        CHECK(scores.of(kind).data[1 * N + 2] == doctest::Approx(0.5));
        CHECK(scores.of(kind).data[1 * N + 3] == 0.0f);
        CHECK(scores.of(kind).data[0 * N + 2] == 0.0f);
    }
}

TEST_CASE("the chance level 1/sqrt(D) (1/sqrt(D - 1) centred) is the root-mean-square score of random weights") {
    // Independent Gaussian layers, one head each, 600 draws per shape: every kind's mean squared
    // score is 1/D (1/(D - 1) with LayerNorm's centring) within four standard errors, and the mean
    // score a little below its square root (by about 1/(4 d_h^2) when D is much larger than d_h), so
    // within 5% of the chance level.
    OnednnBackend backend;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const auto gaussian = [&](std::vector<int64_t> shape) {
        Tensor t(std::move(shape));
        for (float& x : t.data) x = normal(rng());
        return t;
    };
    struct Shape {
        int64_t D, d;
        bool center;
    };
    for (const Shape& s : {Shape{16, 4, false}, Shape{24, 8, true}, Shape{64, 8, false}}) {
        INFO("D " << s.D << " d " << s.d << " center " << s.center);
        NormFolding folding;
        folding.center = s.center;
        if (s.center) {
            Tensor ones({s.D});
            std::fill(ones.data.begin(), ones.data.end(), 1.0f);
            folding.weights.assign(2, ones);
        }
        const double chance = composition_chance(s.D, s.center);
        CHECK(chance == doctest::Approx(1.0 / std::sqrt(s.center ? s.D - 1.0 : s.D)));
        constexpr int draws = 600;
        for (const CompositionKind kind : {CompositionKind::q, CompositionKind::k, CompositionKind::v}) {
            double sum = 0, sum_square = 0, sum_fourth = 0;
            for (int n = 0; n < draws; ++n) {
                std::vector<LayerWeights> layers(2);
                for (LayerWeights& w : layers) {
                    w.d_model = s.D, w.num_heads = w.num_kv_heads = 1, w.d_head = s.d;
                    w.w_q = gaussian({s.D, s.d}), w.w_k = gaussian({s.D, s.d}), w.w_v = gaussian({s.D, s.d});
                    w.w_o = gaussian({s.d, s.D});
                }
                const CompositionScores scores = composition_scores({&layers[0], &layers[1]}, folding, backend);
                CHECK(scores.chance == chance);
                const double x = scores.of(kind).data[1];  // L0H0 -> L1H0
                sum += x, sum_square += x * x, sum_fourth += x * x * x * x;
            }
            const double mean_square = sum_square / draws,
                         standard_error = std::sqrt((sum_fourth / draws - mean_square * mean_square) / draws);
            CHECK(std::abs(mean_square - chance * chance) < 4 * standard_error);
            CHECK(sum / draws <= std::sqrt(mean_square));  // a mean is at most its root mean square
            CHECK(sum / draws > 0.95 * chance);            // measured 0.97 (d_h 4) to 0.99 (d_h 8) of it
        }
    }
}
