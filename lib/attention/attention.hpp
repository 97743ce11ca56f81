// Multi-head attention of one layer on the CPU (oneDNN underneath, see onednn_backend.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "layer_result.hpp"
#include "layer_weights.hpp"

namespace attn_viz {

class HeadOutputShares;
class OnednnBackend;

struct AttentionRequest {
    const Tensor* input = nullptr;      // x: [T, D], queries (and keys/values without context)
    const Tensor* context = nullptr;    // c: [S, D] for cross-attention (keys/values), or null
    std::vector<uint8_t> key_excluded;  // [S] padding mask, 1 = exclude; empty = none
    const Tensor* score_bias =
        nullptr;  // [H, T, S] added to the scaled scores before masking (T5's relative positions), or null
    bool with_contributions = true;  // fill contribution_norms / contribution_gram
    bool with_value_norms = false;   // fill value_norms (norm-based maps)
};

// Runs one layer. The weights are used where they are, not copied (a Llama-7B layer's are 256 MB):
// `weights` and `backend` must outlive the layer. oneDNN primitives are created once per shape by
// the backend and reused across calls.
class AttentionLayer {
public:
    AttentionLayer(OnednnBackend& backend, const LayerWeights& weights);
    AttentionLayer(OnednnBackend&, LayerWeights&&) = delete;  // would dangle
    ~AttentionLayer();
    LayerResult run(const AttentionRequest& request);
    // Hands back a result that is no longer needed: the next run writes its attention map into
    // this one's memory when it is large enough. Batches and corpora pass each sequence's result
    // back, since first-touch page faults on a fresh [H, T, S] buffer cost about as much as the
    // score product itself (268 MB at H = 16, T = 2048).
    void recycle(LayerResult&& finished);
    // The same for a bare [H, T, S] map buffer (a model hands each layer the map the previous
    // layer's visitor left).
    void recycle(Tensor&& map);
    const LayerWeights& weights() const { return weights_; }

private:
    // A [H, T, S] buffer for the next map: the recycled one when it is large enough.
    Tensor take_map_buffer(const std::vector<int64_t>& shape);

    OnednnBackend& backend_;
    const LayerWeights& weights_;
    std::vector<double> rope_frequencies_;             // rope_inverse_frequencies(weights_)
    Tensor spare_map_;                                 // a recycled attention map, or empty
    std::unique_ptr<HeadOutputShares> output_shares_;  // from W_O, made by the first run that needs it
};

// Rotary position embedding in place, pair i turned by position * inverse_frequencies[i] (see
// rope_inverse_frequencies), on the first 2 * inverse_frequencies.size() features of each head;
// the other features pass through.
// x: [heads, T, d_h] (head-major); positions 0..T-1 (plus `first_position`).
void apply_rope(Tensor& x, RopeStyle style, const std::vector<double>& inverse_frequencies, int64_t first_position = 0);

}  // namespace attn_viz
