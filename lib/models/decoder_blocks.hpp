// One reader of the Llama-like decoders' weights (family_table.hpp) from any TensorSource: a
// Hugging Face folder's safetensors and a GGUF file alike, by the family's tensor names in that
// container, into the one ModelWeights (the attention's matrices as x W, the feed-forward's a row
// per output, Phi-3's fused matrices split, Gemma's GGUF norms stored as 1 + w taken back to w).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "family_table.hpp"
#include "hf_config.hpp"
#include "model_weights.hpp"
#include "tensor_source.hpp"

namespace attn_viz {

// What a config.json or a GGUF file's metadata says about its model, before any tensor: the
// family's row, the container, the configuration and each block's attention settings.
struct DecoderLayout {
    const FamilySpec* family = nullptr;
    Container container = Container::hf;
    ModelConfig config;
    std::vector<LayerWeights> settings;  // block l's attention settings, no tensors
    // A Hugging Face folder's config.json: its attention goes through the llama layout preset
    // (layouts.hpp) and its biases must be as the family's bias rules and config.json say.
    std::optional<HfConfig> hf;
    bool final_norm = true;  // false: none before the classifier (OPT's post-norm blocks or _remove_final_layer_norm)
};

// Throws Error(bad_input) naming the file unless every tensor of block `layer` (biases aside)
// is there with its shape and a decodable type, or for a feed-forward bias of a fused GGUF block
// (Phi-3's, which is read without); converts nothing.
void check_decoder_block(const TensorSource& source, const DecoderLayout& layout, int64_t layer);

// Block `layer` into `b`, in the memory b's matrices have where the source can (GGUF), so that
// refilling one BlockWeights block after block allocates them once. A GGUF block is checked
// whole first (check_decoder_block), as the streaming reader checks it; a folder's tensors are
// checked as they are read. Error(bad_input) naming the file and the tensor.
void read_decoder_block(const TensorSource& source, const DecoderLayout& layout, int64_t layer, BlockWeights& b);

// Embedding, final norm and classifier (unless shared with the embedding).
void read_decoder_outside_blocks(const TensorSource& source, const DecoderLayout& layout, ModelWeights& w);

// Every block, read now.
std::shared_ptr<const BlockSource> read_decoder_blocks(const TensorSource& source, const DecoderLayout& layout);

// The blocks left in the (shared, mapped) source, any container's: every block's tensors are
// checked when made (names, shapes, decodable types), so a bad file fails before the forward pass
// rather than at its last layer; load reads and converts one block when called.
class StreamedDecoderBlocks final : public BlockSource {
public:
    StreamedDecoderBlocks(std::shared_ptr<const TensorSource> source, DecoderLayout layout);
    int64_t n_layers() const override { return layout_.config.n_layers; }
    bool streams() const override { return true; }
    const BlockWeights* held(int64_t) const override { return nullptr; }
    BlockWeights load(int64_t layer) const override;
    void load_into(int64_t layer, BlockWeights& block) const override;

private:
    std::shared_ptr<const TensorSource> source_;
    DecoderLayout layout_;
};

}  // namespace attn_viz
