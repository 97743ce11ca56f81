// A whole Llama-style decoder (llama2.c's architecture) run over a token sequence on oneDNN:
// embeddings -> per block RMSNorm, attention (RoPE, GQA, causal), residual, RMSNorm, SwiGLU
// feed-forward, residual -> final RMSNorm -> logits. Every layer's attention is kept for drawing
// (run), or handed to a visitor block by block and not kept (run_blocks).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "attention.hpp"
#include "llama2c_checkpoint.hpp"
#include "model_run.hpp"
#include "onednn_backend.hpp"
#include "whole_model.hpp"

namespace attn_viz {

class LlamaModel : public WholeModel {
public:
    // Builds one AttentionLayer per block (weights repacked once), or, when `weights` streams its
    // blocks, loads nothing yet: a pass loads each block when it reaches it, replacing the
    // previous one (one block's weights at a time). `backend` must outlive the model.
    LlamaModel(OnednnBackend& backend, LlamaWeights weights);

    const LlamaWeights& weights() const { return weights_; }
    const ModelDescription& description() const override { return description_; }
    // Every block's attention weights (for weight similarities, ablation). A streamed model keeps
    // a copy of each block's attention weights when a pass first loads the block (unless
    // keep_attention_weights(false)) and loads here the blocks no pass has loaded yet.
    std::vector<const LayerWeights*> attention_weights() const override;
    bool has_logits() const override { return true; }
    uint64_t fingerprint() const override;
    // Whether passes of a streamed model keep each block's attention weights (default true);
    // false bounds memory by one block (run_blocks' visitor sees each block's weights anyway).
    void keep_attention_weights(bool keep) override { keep_attention_ = keep; }

    // tokens: T ids, 1 <= T <= seq_len, each below the vocabulary size (Error(bad_input) otherwise);
    // the blocks as WholeModel::run_blocks says.
    ModelRun run_blocks(const std::vector<int>& tokens, bool with_contributions, bool with_value_norms,
                        const BlockVisitor& visit) override;

    // The logits [T, V] when block `layer`'s attention output is `attention_output` [T, D] instead
    // of run.layers[layer].output: the rest of the model reruns from there on
    // run.residual[layer], the blocks before it are reused from `run`.
    Tensor logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output) override;

private:
    // x: [T, D] the residual stream after block l's attention -> after its feed-forward, in place.
    void add_feed_forward(size_t l, Tensor& x);
    // x: [T, D] the residual stream after the last block -> logits [T, V].
    Tensor classify(const Tensor& x);
    // Block l's weights and attention layer: the model's own, or (streaming) loaded now unless
    // block l was the last one loaded.
    const LlamaBlockWeights& block(size_t l);
    AttentionLayer& attention_layer(size_t l);

    OnednnBackend& backend_;
    LlamaWeights weights_;
    ModelDescription description_;
    std::vector<std::unique_ptr<AttentionLayer>> attention_;  // one per block unless streaming
    mutable std::vector<std::optional<LayerWeights>> streamed_attention_;  // streaming: the blocks' attention kept so far
    bool keep_attention_ = true;
    std::optional<LlamaBlockWeights> streamed_block_;          // streaming: the block loaded last
    std::unique_ptr<AttentionLayer> streamed_layer_;           // its attention layer
    size_t streamed_index_ = 0;
};

}  // namespace attn_viz
