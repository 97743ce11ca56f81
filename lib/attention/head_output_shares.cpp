#include "head_output_shares.hpp"

#include <algorithm>
#include <cmath>

#include "gram_matrix.hpp"
#include "parallel_for.hpp"

namespace attn_viz {

HeadOutputShares::HeadOutputShares(OnednnBackend& backend, const Tensor& w_o, int64_t heads)
    : heads_(heads), d_head_(w_o.dim(0) / heads) {
    const int64_t width = w_o.dim(0), d_h = d_head_;
    // Step 1: G = W_O W_O^T.
    output_gram_ = std::make_shared<const Tensor>(gram(backend, w_o, /*of_rows=*/true));
    const Tensor& g = *output_gram_;
    // Step 2: the diagonal blocks, copied together.
    head_grams_ = Tensor::uninitialized({heads, d_h, d_h});
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t x = 0; x < d_h; ++x)
            std::copy_n(g.ptr() + (h * d_h + x) * width + h * d_h, d_h, head_grams_.ptr() + (h * d_h + x) * d_h);
}

void HeadOutputShares::summarise(OnednnBackend& backend, const Tensor& z, const Tensor& context, Tensor& norms,
                                 Tensor& share_gram) const {
    const int64_t H = heads_, d_h = d_head_, T = z.dim(1);
    // Step 1: norms. y[h] = z[h] G_hh, all heads in one batched product, then ||c_th||^2 = <y[h, t], z[h, t]>.
    Tensor y = Tensor::uninitialized({H, T, d_h});
    MatmulShape s = dense_matmul(T, d_h, d_h);
    s.batch = H;
    backend.matmul(s, z.ptr(), head_grams_.ptr(), nullptr, y.ptr());
    norms = Tensor::uninitialized({H, T});
#pragma omp parallel for schedule(static) if (H * T * d_h > parallel_min_values)
    for (int64_t n = 0; n < H * T; ++n) {
        const double square = dot_in_double(y.ptr() + n * d_h, z.ptr() + n * d_h, d_h);
        norms.data[n] = static_cast<float>(std::sqrt(std::max(square, 0.0)));  // rounding can dip below 0
    }
    // Step 2: the Gram matrix of the outputs, Z^T Z, its upper triangle (both are symmetric, so
    // the blocks a <= b below read only that).
    const Tensor outputs_gram = gram(backend, context, /*of_rows=*/false, GramFill::upper_triangle);
    // Step 3: share_gram[a, b] = share_gram[b, a] = sum of the (a, b) d_h x d_h blocks of (Z^T Z) .* G.
    share_gram = Tensor({H, H});
    // (Blocks a <= b read H^2 d_h^2 values of the two matrices in all.)
#pragma omp parallel for schedule(dynamic) if (H * H * d_h * d_h > parallel_min_values)
    for (int64_t a = 0; a < H; ++a) {
        share_gram.data[a * H + a] =
            static_cast<float>(diagonal_block_inner(outputs_gram, *output_gram_, a * d_h, d_h));
        for (int64_t b = a + 1; b < H; ++b)
            share_gram.data[a * H + b] = share_gram.data[b * H + a] =
                static_cast<float>(block_inner(outputs_gram, a * d_h, b * d_h, *output_gram_, a * d_h, b * d_h, d_h));
    }
}

void HeadOutputShares::value_norms(const Tensor& v, Tensor& norms) const {
    const int64_t H = heads_, d_h = d_head_, KV = v.dim(0), S = v.dim(1), group = H / KV;
    norms = Tensor::uninitialized({H, S});
#pragma omp parallel for schedule(static) if (H * S * d_h * d_h > parallel_min_values)
    for (int64_t n = 0; n < H * S; ++n) {
        const int64_t h = n / S, j = n % S;
        const float* value = v.ptr() + ((h / group) * S + j) * d_h;
        const float* g = head_grams_.ptr() + h * d_h * d_h;
        double square = 0;
        for (int64_t x = 0; x < d_h; ++x) square += value[x] * dot_in_double(g + x * d_h, value, d_h);
        norms.data[n] = static_cast<float>(std::sqrt(std::max(square, 0.0)));
    }
}

}  // namespace attn_viz
