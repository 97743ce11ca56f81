// One head's output inside a layer's output: the head's columns of the concatenated head outputs,
// their mean over the tokens, and the layer output with that head's share replaced. True
// ablation (head_ablation.hpp, seq2seq_ablation.hpp) and activation patching replace a head this way.
#pragma once

#include <cstdint>

#include "layer_result.hpp"
#include "layer_weights.hpp"
#include "onednn_backend.hpp"
#include "tensor.hpp"

namespace attn_viz {

// context: [T, H*d_h] a layer's concatenated head outputs -> head `head`'s columns: [T, d_h].
Tensor head_output(const Tensor& context, int64_t head, int64_t d_head);

// z: [T, d_h] one head's output -> its mean over the tokens, at every position: [T, d_h].
Tensor token_mean(const Tensor& z);

// z: [T, d_h] -> what ablation puts in its place: zeros, or (by_mean) token_mean(z).
Tensor ablation_replacement(const Tensor& z, bool by_mean);

// replacement: [T, d_h]. The layer's output [T, D] with head `head`'s output z_h
// (layer.context) replaced by `replacement`: Z' W_O + b_O as the layer computed Y = Z W_O + b_O,
// Z' being layer.context with head h's d_h columns replaced. (Y - (z_h - replacement) W_O^h is the
// same in exact arithmetic, but in float32 it loses the digits Y and head h's share have in common
// when that share is large.) A replacement equal to z_h gives Y's own bits.
Tensor output_with_head_replaced(OnednnBackend& backend, const LayerWeights& attention, const LayerResult& layer,
                                 int64_t head, const Tensor& replacement);

}  // namespace attn_viz
