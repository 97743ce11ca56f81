// Each head's share of a layer's output, summarised without forming the shares themselves.
#pragma once

#include <cstdint>
#include <memory>

#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// Head h's share of output row t is c_th = z[h, t] W_O^h, with W_O^h head h's d_h rows of W_O.
// Forming every share is an [H, T, D] tensor; instead, with G = W_O W_O^T (per layer, once):
//   ||c_th||^2 = z[h, t] G_hh z[h, t]^T                 (G_hh: head h's d_h x d_h diagonal block)
//   sum_t <c_ta, c_tb> = sum((Z^T Z)_ab .* G_ab)          (Z: [T, H d_h] the concatenated outputs)
// so a run costs one [H d_h, T] x [T, H d_h] product and a small batched one.
class HeadOutputShares {
public:
    // w_o: [H*d_h, D]. Computes G on oneDNN.
    HeadOutputShares(OnednnBackend& backend, const Tensor& w_o, int64_t heads);

    // z: [H, T, d_h] head outputs, head-major; context: [T, H*d_h] the same, token-major.
    // norms <- [H, T] ||c_th||; share_gram <- [H, H] sum_t <c_ta, c_tb>.
    void summarise(OnednnBackend& backend, const Tensor& z, const Tensor& context, Tensor& norms,
                   Tensor& share_gram) const;

    // v: [KV, S, d_h] value vectors, head-major; query head h reads KV head h / (H / KV).
    // norms <- [H, S] ||v[g(h), j] W_O^h|| = sqrt(v G_hh v^T): what key j sends through head h at
    // weight 1 (Kobayashi et al. 2020's ||f(x_j)||). O(H S d_h^2), in double.
    void value_norms(const Tensor& v, Tensor& norms) const;

    // G = W_O W_O^T [H*d_h, H*d_h], shared with the results that carry it (LayerResult::output_gram).
    const std::shared_ptr<const Tensor>& output_gram() const { return output_gram_; }

private:
    int64_t heads_ = 0, d_head_ = 0;
    std::shared_ptr<const Tensor> output_gram_;  // [H*d_h, H*d_h] G = W_O W_O^T
    Tensor head_grams_;  // [H, d_h, d_h] its diagonal blocks, dense (a strided view would leave brgemm)
};

}  // namespace attn_viz
