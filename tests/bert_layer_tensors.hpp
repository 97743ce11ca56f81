// One attention layer as a BERT checkpoint names it, for the tests that write BERT safetensors.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "layer_weights.hpp"

namespace test_support {

// The layer's tensors under `base` ("encoder.layer.L."), torch Linear weights as [out, in].
inline std::vector<std::pair<std::string, attn_viz::Tensor>> bert_layer_tensors(const attn_viz::LayerWeights& w,
                                                                                const std::string& base) {
    using attn_viz::transposed;
    const std::string self = base + "attention.self.";
    return {{self + "query.weight", transposed(w.w_q)},
            {self + "query.bias", w.b_q},
            {self + "key.weight", transposed(w.w_k)},
            {self + "key.bias", w.b_k},
            {self + "value.weight", transposed(w.w_v)},
            {self + "value.bias", w.b_v},
            {base + "attention.output.dense.weight", transposed(w.w_o)},
            {base + "attention.output.dense.bias", w.b_o}};
}

}  // namespace test_support
