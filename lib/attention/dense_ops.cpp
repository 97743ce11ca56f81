#include "dense_ops.hpp"

namespace attn_viz {

Tensor linear(OnednnBackend& backend, const Tensor& x, const Tensor& w, const Tensor& bias) {
    Tensor y = Tensor::uninitialized({x.dim(0), w.dim(1)});
    MatmulShape shape = dense_matmul(x.dim(0), x.dim(1), w.dim(1));
    shape.has_bias = !bias.empty();
    backend.matmul(shape, x.ptr(), w.ptr(), bias.empty() ? nullptr : bias.ptr(), y.ptr());
    return y;
}

void add_in_place(Tensor& x, const Tensor& delta) {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += delta.data[i];
}

}  // namespace attn_viz
