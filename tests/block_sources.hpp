// Block sources for the tests: a model's blocks copied to edit them, held whole, or streamed
// through a wrapper that counts the loads of each block and remembers which BlockWeights each
// refill went into.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "model_weights.hpp"

namespace test_support {

// `w`'s blocks, to edit: a copy of them, held by `w` alone from now on (a BlockSource is shared
// and never changed). Bind the result once: a second call copies again.
inline std::vector<attn_viz::BlockWeights>& edited_blocks(attn_viz::ModelWeights& w) {
    std::vector<attn_viz::BlockWeights> blocks;
    for (int64_t l = 0; l < w.blocks->n_layers(); ++l) blocks.push_back(w.blocks->load(l));
    auto held = std::make_shared<attn_viz::HeldBlocks>(std::move(blocks));
    w.blocks = held;
    return held->blocks();
}

// `w` with every block read now and held (a streamed model made whole).
inline attn_viz::ModelWeights held_copy(attn_viz::ModelWeights w) {
    edited_blocks(w);
    return w;
}

// Another source's blocks, streamed: every load and refill counted in `loads` (one count per
// block), the BlockWeights each refill went into kept in `refilled`.
class CountedBlocks final : public attn_viz::BlockSource {
public:
    CountedBlocks(std::shared_ptr<const attn_viz::BlockSource> inner, std::vector<int>& loads,
                  std::vector<const attn_viz::BlockWeights*>* refilled = nullptr)
        : inner_(std::move(inner)), loads_(loads), refilled_(refilled) {
        loads_.assign(static_cast<size_t>(inner_->n_layers()), 0);
    }
    int64_t n_layers() const override { return inner_->n_layers(); }
    bool streams() const override { return true; }
    const attn_viz::BlockWeights* held(int64_t) const override { return nullptr; }
    attn_viz::BlockWeights load(int64_t layer) const override {
        ++loads_[static_cast<size_t>(layer)];
        return inner_->load(layer);
    }
    void load_into(int64_t layer, attn_viz::BlockWeights& block) const override {
        ++loads_[static_cast<size_t>(layer)];
        if (refilled_) refilled_->push_back(&block);
        inner_->load_into(layer, block);
    }

private:
    std::shared_ptr<const attn_viz::BlockSource> inner_;
    std::vector<int>& loads_;
    std::vector<const attn_viz::BlockWeights*>* refilled_;
};

// `w` with its blocks behind CountedBlocks.
inline attn_viz::ModelWeights counted_copy(attn_viz::ModelWeights w, std::vector<int>& loads,
                                           std::vector<const attn_viz::BlockWeights*>* refilled = nullptr) {
    w.blocks = std::make_shared<CountedBlocks>(w.blocks, loads, refilled);
    return w;
}

}  // namespace test_support
