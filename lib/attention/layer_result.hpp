// What one attention layer's run produces: the maps that pictures and statistics read.
#pragma once

#include <memory>

#include "tensor.hpp"
#include "visibility.hpp"

namespace attn_viz {

struct LayerResult {
    Visibility visibility;
    Tensor attention;           // [H, T, S] softmax weights; masked entries and rows with no visible key are 0
    Tensor logit_margin;        // [H, T] largest minus second-largest scaled score among visible keys (0 if < 2)
    Tensor context;             // [T, H*d_h] concatenated head outputs A_h V_h, before W_O
    Tensor values;              // [KV, S, d_h] V of each key/value head; head h reads h / (H / KV)
    Tensor output;              // [T, D] the layer output
    Tensor contribution_norms;  // [H, T] ||(A_h V_h)_t W_O^h||, head h's share of output row t
    Tensor contribution_gram;   // [H, H] sum_t <c_th, c_tg> of those shares
    Tensor value_norms;         // [H, S] ||v_j W_O^h||, key j's value through head h (empty unless asked)
    // [H d_h, H d_h] W_O W_O^T, the layer's (computed once per layer for the output shares and
    // shared with the weight similarities); null unless contributions or value norms were asked,
    // and in the results a streamed model keeps for every layer (WholeModel::run, corpus batches).
    std::shared_ptr<const Tensor> output_gram;
};

}  // namespace attn_viz
