#include "output_dependence.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "cholesky.hpp"
#include "error.hpp"
#include "gram_matrix.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

// The dense steps below run in double on [d_h, d_h] or [T, T] blocks, up to a few million
// multiply-adds per pair of heads, so they are compiled for the machine's vector width. Their
// inner loops update contiguous rows (a reduction in one accumulator would neither vectorize nor
// may be reordered); the Cholesky factorisation sums its terms by panels of 8 in registers.

// m: [n, n] (float) -> the d x d block at (row, col), in double.
std::vector<double> block(const Tensor& m, int64_t row, int64_t col, int64_t d) {
    const int64_t n = m.dim(1);
    std::vector<double> b(static_cast<size_t>(d * d));
    for (int64_t r = 0; r < d; ++r)
        for (int64_t c = 0; c < d; ++c) b[r * d + c] = m.data[(row + r) * n + col + c];
    return b;
}

double sum_of_squares(const std::vector<double>& x) {
    double s = 0;
    for (double v : x) s += v * v;
    return s;
}

// context: [T, C] -> each column's mean over the rows, in double.
std::vector<double> column_means(const Tensor& context) {
    const int64_t T = context.dim(0), C = context.dim(1);
    std::vector<double> mean(static_cast<size_t>(C), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) mean[c] += context.data[t * C + c];
    for (double& m : mean) m /= static_cast<double>(T);
    return mean;
}

// context: [T, H*d_h] -> the same with every column's mean (in double) subtracted.
Tensor centred_columns(const Tensor& context) {
    const int64_t T = context.dim(0), C = context.dim(1);
    const std::vector<double> mean = column_means(context);
    Tensor centred({T, C});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) centred.data[t * C + c] = static_cast<float>(context.data[t * C + c] - mean[c]);
    return centred;
}

// inverse: [d, d] lower triangular; m: [d, d] -> inverse m, [d, d]:
// out[r, c] = sum_{k <= r} inverse[r, k] m[k, c].
[[gnu::target_clones("avx512f", "avx2", "default")]] std::vector<double> lower_times(const std::vector<double>& inverse,
                                                                                     const std::vector<double>& m,
                                                                                     int64_t d) {
    std::vector<double> out(static_cast<size_t>(d * d), 0.0);
    for (int64_t r = 0; r < d; ++r)
        for (int64_t k = 0; k <= r; ++k) {
            const double w = inverse[r * d + k];
            const double* row = m.data() + k * d;
            for (int64_t c = 0; c < d; ++c) out[r * d + c] += w * row[c];
        }
    return out;
}

// s: [n, n], x: [m, n] -> the lower triangle of s + sign x^T x (the upper one is left as it was;
// cholesky_in_place reads the lower): s[r, c] += sign sum_k x[k, r] x[k, c], c <= r.
[[gnu::target_clones("avx512f", "avx2", "default")]] void add_lower_gram(std::vector<double>& s,
                                                                         const std::vector<double>& x, int64_t m,
                                                                         int64_t n, double sign) {
    for (int64_t k = 0; k < m; ++k) {
        const double* row = x.data() + k * n;
        for (int64_t r = 0; r < n; ++r) {
            const double w = sign * row[r];
            double* out = s.data() + r * n;
            for (int64_t c = 0; c <= r; ++c) out[c] += w * row[c];
        }
    }
}

// One head's share of the layer's covariance.
struct HeadCovariance {
    double own_norm = 0;              // ||Sigma_aa||_F
    std::vector<double> regularised;  // Sigma_aa + ridge I, [d, d]
    std::vector<double> inverse;      // L_a^-1 for regularised = L_a L_a^T; empty for a constant output
    double half_log_det = 0;          // ln det(regularised) / 2
};

// covariance: [C, C], the head's block at (a d, a d).
HeadCovariance head_covariance(const Tensor& covariance, int64_t a, int64_t d) {
    HeadCovariance head;
    head.regularised = block(covariance, a * d, a * d, d);
    head.own_norm = std::sqrt(sum_of_squares(head.regularised));
    double trace = 0;
    for (int64_t k = 0; k < d; ++k) trace += head.regularised[k * d + k];
    if (!(trace > 0)) return head;  // constant output: nothing to condition on
    for (int64_t k = 0; k < d; ++k) head.regularised[k * d + k] += output_mi_ridge * trace / static_cast<double>(d);
    std::vector<double> factor = head.regularised;
    if (!cholesky_in_place(factor, d)) return head;
    head.inverse = lower_inverse(factor, d);
    head.half_log_det = half_log_det(factor, d);
    return head;
}

// The Gaussian MI of heads a and b from their regularised covariances A, B and their
// cross-covariance sigma_ab: -1/2 ln det(I - M M^T) for M = L_a^-1 Sigma_ab L_b^-T, which is
// 1/2 (ln det B - ln det S) for the Schur complement S = B - Sigma_ab^T A^-1 Sigma_ab = B - X^T X,
// X = L_a^-1 Sigma_ab. NaN when S is not numerically positive definite.
double gaussian_mi(const HeadCovariance& a, const HeadCovariance& b, const std::vector<double>& sigma_ab, int64_t d) {
    std::vector<double> schur = b.regularised;
    add_lower_gram(schur, lower_times(a.inverse, sigma_ab, d), d, d, -1.0);
    if (!cholesky_in_place(schur, d)) return NAN;
    return b.half_log_det - half_log_det(schur, d);
}

// Every pair a <= b of H heads for which both `usable(a)` and `usable(b)` hold, in the order the
// loops below visit them.
template <typename Usable>
std::vector<std::pair<int64_t, int64_t>> usable_pairs(int64_t H, Usable usable) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t a = 0; a < H; ++a)
        for (int64_t b = a; b < H; ++b)
            if (usable(a) && usable(b)) pairs.emplace_back(a, b);
    return pairs;
}

// Feature-space form: one layer's pairs into the [N, N] matrices, its heads starting at `first`,
// from the [d_h, d_h] blocks of the outputs' covariance. context: [T, H*d_h].
void feature_space_dependence(const Tensor& context, int64_t H, int64_t first, OnednnBackend& backend, int threads,
                              OutputDependence& out) {
    const int64_t d = context.dim(1) / H;
    // Step 1: covariances (times T) of the centred outputs, [H*d_h, H*d_h].
    const Tensor covariance = gram(backend, centred_columns(context), false);
    // Step 2: per head, its ridge-regularised covariance and the inverse of its Cholesky factor.
    std::vector<HeadCovariance> heads(static_cast<size_t>(H));
    parallel_for(
        H, threads, [&](int64_t a) { heads[static_cast<size_t>(a)] = head_covariance(covariance, a, d); }, d * d * d);
    // Step 3: every pair whose outputs both vary, from its block Sigma_ab.
    const auto pairs = usable_pairs(H, [&](int64_t a) { return !heads[static_cast<size_t>(a)].inverse.empty(); });
    parallel_for(
        static_cast<int64_t>(pairs.size()), threads,
        [&](int64_t p) {
            const auto [a, b] = pairs[static_cast<size_t>(p)];
            const HeadCovariance &head_a = heads[static_cast<size_t>(a)], &head_b = heads[static_cast<size_t>(b)];
            const std::vector<double> sigma_ab = block(covariance, a * d, b * d, d);
            const int64_t i = first + a, j = first + b;
            out.linear_cka.at(i, j) = out.linear_cka.at(j, i) =
                sum_of_squares(sigma_ab) / (head_a.own_norm * head_b.own_norm);
            out.gaussian_mi.at(i, j) = out.gaussian_mi.at(j, i) = gaussian_mi(head_a, head_b, sigma_ab, d);
        },
        d * d * d);
}

// One head's outputs seen from the tokens: K = X X^T of its centred outputs X ([T, d_h]).
struct HeadTokenGram {
    std::vector<double> gram;  // K, [T, T], lower triangle
    double ridge = 0;          // lambda = output_mi_ridge tr(K) / d_h (tr K = tr Sigma_aa); 0 for a constant output
    double own_norm = 0;       // ||K||_F = ||Sigma_aa||_F
    double half_log_det = 0;   // ln det(I + K / lambda) / 2
};

// k, l: [T, T] symmetric, lower triangles -> sum_rc k[r, c] l[r, c] over the whole matrices.
double frobenius_product(const std::vector<double>& k, const std::vector<double>& l, int64_t T) {
    double diagonal = 0, below = 0;
    for (int64_t r = 0; r < T; ++r) {
        for (int64_t c = 0; c < r; ++c) below += k[r * T + c] * l[r * T + c];
        diagonal += k[r * T + r] * l[r * T + r];
    }
    return diagonal + 2 * below;
}

// k: [T, T] lower triangle -> the lower triangle of I + sum_i k_i / lambda_i over the given heads.
std::vector<double> identity_plus(std::initializer_list<const HeadTokenGram*> heads, int64_t T) {
    std::vector<double> sum(static_cast<size_t>(T * T), 0.0);
    for (const HeadTokenGram* head : heads) {
        const double scale = 1.0 / head->ridge;
        for (int64_t r = 0; r < T; ++r)
            for (int64_t c = 0; c <= r; ++c) sum[r * T + c] += scale * head->gram[r * T + c];
    }
    for (int64_t r = 0; r < T; ++r) sum[r * T + r] += 1;
    return sum;
}

// context: [T, H*d_h], means: its column means -> head a's token Gram.
HeadTokenGram head_token_gram(const Tensor& context, const std::vector<double>& means, int64_t a, int64_t d) {
    const int64_t T = context.dim(0), C = context.dim(1);
    std::vector<double> columns(static_cast<size_t>(d * T));  // X^T, [d_h, T]
    for (int64_t t = 0; t < T; ++t)
        for (int64_t k = 0; k < d; ++k) columns[k * T + t] = context.data[t * C + a * d + k] - means[a * d + k];
    HeadTokenGram head;
    head.gram.assign(static_cast<size_t>(T * T), 0.0);
    add_lower_gram(head.gram, columns, d, T, 1.0);
    head.own_norm = std::sqrt(frobenius_product(head.gram, head.gram, T));
    double trace = 0;
    for (int64_t t = 0; t < T; ++t) trace += head.gram[t * T + t];
    if (!(trace > 0)) return head;  // constant output
    head.ridge = output_mi_ridge * trace / static_cast<double>(d);
    std::vector<double> factor = identity_plus({&head}, T);
    if (!cholesky_in_place(factor, T)) {
        head.ridge = 0;
        return head;
    }
    head.half_log_det = half_log_det(factor, T);
    return head;
}

// Token-space form (output_dependence_in_token_space: T < 1.875 d_h): by Sylvester's identity
// ln det(lambda I_d + X^T X) = d ln lambda + ln det(I_T + X X^T / lambda), so with K_a = X_a X_a^T
//   I(a; b) = 1/2 [ln det(I + K_a/l_a) + ln det(I + K_b/l_b) - ln det(I + K_a/l_a + K_b/l_b)]
// (the joint covariance is [X_a X_b]^T [X_a X_b] plus the ridges), and ||Sigma_ab||_F^2 =
// tr(X_a^T X_b X_b^T X_a) = <K_a, K_b>_F. One [T, T] Cholesky factorisation per pair, T^3/6
// multiply-adds, in place of 1.17 d_h^3, and no [H*d_h, H*d_h] covariance. context: [T, H*d_h].
void token_space_dependence(const Tensor& context, int64_t H, int64_t first, int threads, OutputDependence& out) {
    const int64_t T = context.dim(0), d = context.dim(1) / H;
    // Step 1: per head, its token Gram, ridge and ln det(I + K / lambda).
    const std::vector<double> means = column_means(context);
    std::vector<HeadTokenGram> heads(static_cast<size_t>(H));
    parallel_for(
        H, threads, [&](int64_t a) { heads[static_cast<size_t>(a)] = head_token_gram(context, means, a, d); },
        T * T * (T + d));
    // Step 2: every pair whose outputs both vary, from the sum of their scaled Grams.
    const auto pairs = usable_pairs(H, [&](int64_t a) { return heads[static_cast<size_t>(a)].ridge > 0; });
    parallel_for(
        static_cast<int64_t>(pairs.size()), threads,
        [&](int64_t p) {
            const auto [a, b] = pairs[static_cast<size_t>(p)];
            const HeadTokenGram &head_a = heads[static_cast<size_t>(a)], &head_b = heads[static_cast<size_t>(b)];
            const int64_t i = first + a, j = first + b;
            const double cross = frobenius_product(head_a.gram, head_b.gram, T);
            out.linear_cka.at(i, j) = out.linear_cka.at(j, i) = cross / (head_a.own_norm * head_b.own_norm);
            std::vector<double> joint = identity_plus({&head_a, &head_b}, T);
            out.gaussian_mi.at(i, j) = out.gaussian_mi.at(j, i) =
                cholesky_in_place(joint, T) ? head_a.half_log_det + head_b.half_log_det - half_log_det(joint, T) : NAN;
        },
        T * T * T);
}

}  // namespace

OutputDependence output_dependence(const std::vector<const LayerResult*>& layers, OnednnBackend& backend, int threads) {
    const int64_t H = layers.empty() ? 0 : layers[0]->attention.dim(0);
    const int64_t N = H * static_cast<int64_t>(layers.size());
    OutputDependence out{HeadMatrix(N), HeadMatrix(N)};
    for (size_t l = 0; l < layers.size(); ++l) {
        const Tensor& context = layers[l]->context;
        if (context.rank() != 2 || context.dim(0) < 2) continue;
        if (context.dim(1) % H != 0)
            throw Error(ErrorKind::internal, "output_dependence: context width is not a multiple of the head count");
        const int64_t first = static_cast<int64_t>(l) * H;
        if (output_dependence_in_token_space(context.dim(0), context.dim(1) / H))
            token_space_dependence(context, H, first, threads, out);
        else
            feature_space_dependence(context, H, first, backend, threads, out);
    }
    return out;
}

}  // namespace attn_viz
