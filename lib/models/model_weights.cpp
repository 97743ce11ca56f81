#include "model_weights.hpp"

namespace attn_viz {

const BlockWeights& ModelWeights::block(int64_t layer, std::optional<BlockWeights>& scratch) const {
    if (const BlockWeights* held = blocks->held(layer)) return *held;
    if (!scratch) scratch.emplace();
    try {
        blocks->load_into(layer, *scratch);
    } catch (...) {
        scratch.reset();
        throw;
    }
    return *scratch;
}

}  // namespace attn_viz
