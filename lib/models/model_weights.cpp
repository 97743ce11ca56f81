#include "model_weights.hpp"

namespace attn_viz {

void ModelWeights::read_block(int64_t layer, std::optional<BlockWeights>& block) const {
    if (!block || !load_block_into) {
        block.reset();  // the old block's memory goes before the new one is read
        block = load_block(layer);
        return;
    }
    try {
        load_block_into(layer, *block);
    } catch (...) {
        block.reset();
        throw;
    }
}

}  // namespace attn_viz
