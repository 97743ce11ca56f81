#include "head_output_shares.hpp"

#include <algorithm>
#include <cmath>

#include "block_inner.hpp"

namespace attn_viz {

HeadOutputShares::HeadOutputShares(OnednnBackend& backend, const Tensor& w_o, int64_t heads)
    : heads_(heads), d_head_(w_o.dim(0) / heads) {
    const int64_t width = w_o.dim(0), D = w_o.dim(1), d_h = d_head_;
    // Step 1: G = W_O W_O^T, the second operand a transposed view of W_O.
    output_gram_ = Tensor::uninitialized({width, width});
    MatmulShape s = dense_matmul(width, D, width);
    s.w_strides[1] = 1, s.w_strides[2] = D;
    backend.matmul(s, w_o.ptr(), w_o.ptr(), nullptr, output_gram_.ptr());
    // Step 2: the diagonal blocks, copied together.
    head_grams_ = Tensor::uninitialized({heads, d_h, d_h});
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t x = 0; x < d_h; ++x)
            std::copy_n(output_gram_.ptr() + (h * d_h + x) * width + h * d_h, d_h, head_grams_.ptr() + (h * d_h + x) * d_h);
}

void HeadOutputShares::summarise(OnednnBackend& backend, const Tensor& z, const Tensor& context, Tensor& norms,
                                 Tensor& gram) const {
    const int64_t H = heads_, d_h = d_head_, T = z.dim(1), width = H * d_h;
    // Step 1: norms. y[h] = z[h] G_hh, all heads in one batched product, then ||c_th||^2 = <y[h, t], z[h, t]>.
    Tensor y = Tensor::uninitialized({H, T, d_h});
    MatmulShape s = dense_matmul(T, d_h, d_h);
    s.batch = H;
    backend.matmul(s, z.ptr(), head_grams_.ptr(), nullptr, y.ptr());
    norms = Tensor::uninitialized({H, T});
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < H * T; ++n) {
        const double square = dot_in_double(y.ptr() + n * d_h, z.ptr() + n * d_h, d_h);
        norms.data[n] = static_cast<float>(std::sqrt(std::max(square, 0.0)));  // rounding can dip below 0
    }
    // Step 2: the Gram matrix of the outputs, Z^T Z (first operand a transposed view of context).
    Tensor outputs_gram = Tensor::uninitialized({width, width});
    MatmulShape g = dense_matmul(width, T, width);
    g.a_strides[1] = 1, g.a_strides[2] = width;
    backend.matmul(g, context.ptr(), context.ptr(), nullptr, outputs_gram.ptr());
    // Step 3: gram[a, b] = sum of the (a, b) d_h x d_h blocks of (Z^T Z) .* G.
    gram = Tensor({H, H});
    for (int64_t a = 0; a < H; ++a)
        for (int64_t b = 0; b < H; ++b)
            gram.data[a * H + b] =
                static_cast<float>(block_inner(outputs_gram, a * d_h, b * d_h, output_gram_, a * d_h, b * d_h, d_h));
}

}  // namespace attn_viz
