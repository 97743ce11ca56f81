#include "weight_similarity.hpp"

#include <algorithm>
#include <cmath>

#include "error.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

namespace {

// One head's circuits as low-rank factors, each stored transposed ([d_h, D], one row per column
// of the factor) so that the d_h x d_h Gram blocks are dot products of contiguous rows.
// QK = left_qk right_qk^T with left = W_Q^h, right = W_K^g; OV = left_ov right_ov^T with
// left = W_V^g, right = (W_O^h)^T.
struct HeadFactors {
    int64_t layer = 0;
    std::vector<float> left_qk, right_qk, left_ov, right_ov;  // each [d_h, D]
};

// matrix: [rows, cols]; copies columns [first, first + count) as rows of the result: [count, rows].
std::vector<float> columns_as_rows(const Tensor& matrix, int64_t first, int64_t count) {
    const int64_t rows = matrix.dim(0), cols = matrix.dim(1);
    std::vector<float> out(static_cast<size_t>(count * rows));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < count; ++c) out[static_cast<size_t>(c * rows + r)] = matrix.data[r * cols + first + c];
    return out;
}

// x, y: [n]. Double accumulation in eight lanes (vectorizes without reassociation).
double dot(const float* x, const float* y, int64_t n) {
    double lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) lanes[l] += static_cast<double>(x[i + l]) * y[i + l];
    double sum = 0;
    for (; i < n; ++i) sum += static_cast<double>(x[i]) * y[i];
    for (double lane : lanes) sum += lane;
    return sum;
}

// <A B^T, C E^T>_F = sum((A^T C) .* (B^T E)); a, b, c, e: [r, D] (factor columns as rows).
double frobenius_inner(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                       const std::vector<float>& e, int64_t r, int64_t D) {
    double sum = 0;
    for (int64_t x = 0; x < r; ++x)
        for (int64_t y = 0; y < r; ++y)
            sum += dot(&a[x * D], &c[y * D], D) * dot(&b[x * D], &e[y * D], D);
    return sum;
}

}  // namespace

WeightSimilarities weight_similarities(const std::vector<const LayerWeights*>& layers, bool across_layers,
                                       int threads) {
    // Step 1: every head's factors, layer-major.
    std::vector<HeadFactors> heads;
    for (size_t l = 0; l < layers.size(); ++l) {
        const LayerWeights& w = *layers[l];
        if (w.d_head != layers[0]->d_head || w.d_model != layers[0]->d_model)
            throw Error(ErrorKind::internal, "weight_similarities: layers differ in d_model or d_head");
        const int64_t group = w.num_heads / std::max<int64_t>(w.num_kv_heads, 1);  // query heads per KV head
        for (int64_t h = 0; h < w.num_heads; ++h) {
            const int64_t g = h / std::max<int64_t>(group, 1);
            HeadFactors f;
            f.layer = static_cast<int64_t>(l);
            f.left_qk = columns_as_rows(w.w_q, h * w.d_head, w.d_head);
            f.right_qk = columns_as_rows(w.w_k, g * w.d_head, w.d_head);
            f.left_ov = columns_as_rows(w.w_v, g * w.d_head, w.d_head);
            // (W_O^h)^T's columns are W_O^h's rows: rows [h d_h, (h+1) d_h) of w_o, already contiguous.
            f.right_ov.assign(w.w_o.data.begin() + h * w.d_head * w.d_model,
                              w.w_o.data.begin() + (h + 1) * w.d_head * w.d_model);
            heads.push_back(std::move(f));
        }
    }
    const int64_t N = static_cast<int64_t>(heads.size());
    const int64_t r = layers.empty() ? 0 : layers[0]->d_head, D = layers.empty() ? 0 : layers[0]->d_model;

    // Step 2: Frobenius inner products of every pair that is asked for (a <= b), one task per a.
    HeadMatrix qk_inner(N), ov_inner(N);
    parallel_for(N, threads, [&](int64_t a) {
        const HeadFactors& x = heads[static_cast<size_t>(a)];
        for (int64_t b = a; b < N; ++b) {
            const HeadFactors& y = heads[static_cast<size_t>(b)];
            if (!across_layers && x.layer != y.layer) continue;
            qk_inner.at(a, b) = frobenius_inner(x.left_qk, x.right_qk, y.left_qk, y.right_qk, r, D);
            ov_inner.at(a, b) = frobenius_inner(x.left_ov, x.right_ov, y.left_ov, y.right_ov, r, D);
        }
    });

    // Step 3: cosines (NaN where a circuit is zero or the pair was skipped).
    WeightSimilarities out{HeadMatrix(N), HeadMatrix(N)};
    auto cosine = [](const HeadMatrix& inner, int64_t a, int64_t b) {
        const double norms = std::sqrt(inner.at(a, a) * inner.at(b, b));
        return norms > 0 ? std::clamp(inner.at(a, b) / norms, -1.0, 1.0) : std::numeric_limits<double>::quiet_NaN();
    };
    for (int64_t a = 0; a < N; ++a)
        for (int64_t b = a; b < N; ++b) {
            out.qk_cosine.at(a, b) = out.qk_cosine.at(b, a) = cosine(qk_inner, a, b);
            out.ov_cosine.at(a, b) = out.ov_cosine.at(b, a) = cosine(ov_inner, a, b);
        }
    return out;
}

}  // namespace attn_viz
