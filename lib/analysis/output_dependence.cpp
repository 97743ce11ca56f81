#include "output_dependence.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "gram_matrix.hpp"

namespace attn_viz {

namespace {

// a: [n, n] symmetric -> its Cholesky factor L (lower triangular, a = L L^T) in place, the upper
// triangle zeroed. False when a is not (numerically) positive definite.
bool cholesky_in_place(std::vector<double>& a, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
        double diagonal = a[j * n + j];
        for (int64_t k = 0; k < j; ++k) diagonal -= a[j * n + k] * a[j * n + k];
        if (!(diagonal > 0)) return false;
        const double l_jj = std::sqrt(diagonal);
        a[j * n + j] = l_jj;
        for (int64_t i = j + 1; i < n; ++i) {
            double x = a[i * n + j];
            for (int64_t k = 0; k < j; ++k) x -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = x / l_jj;
        }
        for (int64_t k = j + 1; k < n; ++k) a[j * n + k] = 0;
    }
    return true;
}

// l: [n, n] lower triangular, nonzero diagonal -> l^-1 (lower triangular).
std::vector<double> lower_inverse(const std::vector<double>& l, int64_t n) {
    std::vector<double> inverse(static_cast<size_t>(n * n), 0.0);
    for (int64_t c = 0; c < n; ++c) {
        inverse[c * n + c] = 1.0 / l[c * n + c];
        for (int64_t r = c + 1; r < n; ++r) {
            double x = 0;
            for (int64_t k = c; k < r; ++k) x -= l[r * n + k] * inverse[k * n + c];
            inverse[r * n + c] = x / l[r * n + r];
        }
    }
    return inverse;
}

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

// context: [T, H*d_h] -> the same with every column's mean (in double) subtracted.
Tensor centred_columns(const Tensor& context) {
    const int64_t T = context.dim(0), C = context.dim(1);
    std::vector<double> mean(static_cast<size_t>(C), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) mean[c] += context.data[t * C + c];
    for (double& m : mean) m /= static_cast<double>(T);
    Tensor centred({T, C});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c) centred.data[t * C + c] = static_cast<float>(context.data[t * C + c] - mean[c]);
    return centred;
}

// The loops below run over contiguous rows of a transposed copy so that they vectorize; each
// output's sum still adds its terms in the order k = 0, 1, ..., as the plain dot products would.

// inverse: [d, d] lower triangular; centred: [T, C] -> whitened[:, col + r] = sum_{k <= r}
// inverse[r, k] centred[:, col + k], for r < d.
void whiten_head(const std::vector<double>& inverse, const Tensor& centred, int64_t col, int64_t d, Tensor& whitened) {
    const int64_t T = centred.dim(0), C = centred.dim(1);
    std::vector<double> x(static_cast<size_t>(d * T)), y(static_cast<size_t>(T));  // x: [d, T]
    for (int64_t t = 0; t < T; ++t)
        for (int64_t k = 0; k < d; ++k) x[k * T + t] = centred.data[t * C + col + k];
    for (int64_t r = 0; r < d; ++r) {
        std::fill(y.begin(), y.end(), 0.0);
        for (int64_t k = 0; k <= r; ++k) {
            const double w = inverse[r * d + k];
            const double* xk = x.data() + k * T;
            for (int64_t t = 0; t < T; ++t) y[t] += w * xk[t];
        }
        for (int64_t t = 0; t < T; ++t) whitened.data[t * C + col + r] = static_cast<float>(y[t]);
    }
}

// m: [d, d] -> I - m m^T, [d, d] symmetric.
std::vector<double> identity_minus_outer(const std::vector<double>& m, int64_t d) {
    std::vector<double> m_t(static_cast<size_t>(d * d)), outer(static_cast<size_t>(d)), out(static_cast<size_t>(d * d));
    for (int64_t r = 0; r < d; ++r)
        for (int64_t k = 0; k < d; ++k) m_t[k * d + r] = m[r * d + k];
    for (int64_t r = 0; r < d; ++r) {
        std::fill(outer.begin(), outer.begin() + r + 1, 0.0);  // outer[c] = sum_k m[r, k] m[c, k], c <= r
        for (int64_t k = 0; k < d; ++k) {
            const double w = m[r * d + k];
            const double* column = m_t.data() + k * d;
            for (int64_t c = 0; c <= r; ++c) outer[c] += w * column[c];
        }
        for (int64_t c = 0; c <= r; ++c) out[r * d + c] = out[c * d + r] = (r == c ? 1.0 : 0.0) - outer[c];
    }
    return out;
}

// One layer's pairs into the [N, N] matrices, its heads starting at `first`.
// context: [T, H*d_h].
void layer_dependence(const Tensor& context, int64_t H, int64_t first, OnednnBackend& backend, OutputDependence& out) {
    const int64_t T = context.dim(0), C = context.dim(1), d = C / H;
    // Step 1: covariances (times T) of the centred outputs, [H*d_h, H*d_h].
    const Tensor centred = centred_columns(context);
    const Tensor covariance = gram(backend, centred, false);
    // Step 2: per head, the Cholesky factor of its ridge-regularised covariance, and the outputs
    // whitened by it: y_a = x_a L_a^-T, so that y_a^T y_b = L_a^-1 Sigma_ab L_b^-T.
    std::vector<double> own_norm(static_cast<size_t>(H), 0.0);
    std::vector<bool> varies(static_cast<size_t>(H), false);
    Tensor whitened({T, C});
    for (int64_t a = 0; a < H; ++a) {
        std::vector<double> sigma = block(covariance, a * d, a * d, d);
        own_norm[a] = std::sqrt(sum_of_squares(sigma));
        double trace = 0;
        for (int64_t k = 0; k < d; ++k) trace += sigma[k * d + k];
        if (!(trace > 0)) continue;  // constant output: no covariance to whiten
        for (int64_t k = 0; k < d; ++k) sigma[k * d + k] += output_mi_ridge * trace / static_cast<double>(d);
        if (!cholesky_in_place(sigma, d)) continue;
        varies[a] = true;
        whiten_head(lower_inverse(sigma, d), centred, a * d, d, whitened);
    }
    const Tensor whitened_gram = gram(backend, whitened, false);
    // Step 3: every pair a <= b of the layer.
    for (int64_t a = 0; a < H; ++a)
        for (int64_t b = a; b < H; ++b) {
            if (!varies[a] || !varies[b]) continue;
            const double cka = sum_of_squares(block(covariance, a * d, b * d, d)) / (own_norm[a] * own_norm[b]);
            // M = L_a^-1 Sigma_ab L_b^-T; ln det(I - M M^T) = sum_k ln(1 - rho_k^2).
            std::vector<double> residual = identity_minus_outer(block(whitened_gram, a * d, b * d, d), d);
            double mi = NAN;
            if (cholesky_in_place(residual, d)) {
                mi = 0;
                for (int64_t k = 0; k < d; ++k) mi -= std::log(residual[k * d + k]);
            }
            const int64_t i = first + a, j = first + b;
            out.linear_cka.at(i, j) = out.linear_cka.at(j, i) = cka;
            out.gaussian_mi.at(i, j) = out.gaussian_mi.at(j, i) = mi;
        }
}

}  // namespace

OutputDependence output_dependence(const std::vector<const LayerResult*>& layers, OnednnBackend& backend) {
    const int64_t H = layers.empty() ? 0 : layers[0]->attention.dim(0);
    const int64_t N = H * static_cast<int64_t>(layers.size());
    OutputDependence out{HeadMatrix(N), HeadMatrix(N)};
    for (size_t l = 0; l < layers.size(); ++l) {
        const Tensor& context = layers[l]->context;
        if (context.rank() != 2 || context.dim(0) < 2) continue;
        if (context.dim(1) % H != 0)
            throw Error(ErrorKind::internal, "output_dependence: context width is not a multiple of the head count");
        layer_dependence(context, H, static_cast<int64_t>(l) * H, backend, out);
    }
    return out;
}

}  // namespace attn_viz
