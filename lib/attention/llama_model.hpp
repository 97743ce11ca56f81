// A whole Llama-style decoder (llama2.c's architecture) run over a token sequence on oneDNN:
// embeddings -> per block RMSNorm, attention (RoPE, GQA, causal), residual, RMSNorm, SwiGLU
// feed-forward, residual -> final RMSNorm -> logits. Every layer's attention is kept for drawing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "attention.hpp"
#include "llama2c_checkpoint.hpp"
#include "llama2c_tokenizer.hpp"
#include "model_run.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

// Told after each step of a long computation: `done` steps of `total` (a progress display).
using StepCallback = std::function<void(int64_t done, int64_t total)>;

class LlamaModel {
public:
    // Builds one AttentionLayer per block (weights repacked once), or, when `weights` streams its
    // blocks, keeps only each block's attention weights (read once here) and loads the whole
    // block again when a pass reaches it, replacing the previous one (one block's weights at a
    // time). `backend` must outlive the model.
    LlamaModel(OnednnBackend& backend, LlamaWeights weights);

    const LlamaWeights& weights() const { return weights_; }
    // Every block's attention weights (for the report's weight similarities).
    std::vector<const LayerWeights*> attention_weights() const;

    // tokens: T ids, 1 <= T <= seq_len, each below the vocabulary size (Error(bad_input) otherwise).
    // with_contributions: fill each LayerResult's per-head output shares (slightly more work);
    // with_value_norms: fill each LayerResult's value_norms (for norm-based maps); on_layer (if
    // set) is told after each block.
    ModelRun run(const std::vector<int>& tokens, bool with_contributions = true, bool with_value_norms = false,
                 const StepCallback& on_layer = {});

    // The logits [T, V] when block `layer`'s attention output is `attention_output` [T, D] instead
    // of run.layers[layer].output: the rest of the model reruns from there on
    // run.residual[layer], the blocks before it are reused from `run`.
    Tensor logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output);

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
    std::vector<std::unique_ptr<AttentionLayer>> attention_;  // one per block unless streaming
    std::vector<LayerWeights> streamed_attention_;             // streaming: every block's attention
    std::optional<LlamaBlockWeights> streamed_block_;          // streaming: the block loaded last
    std::unique_ptr<AttentionLayer> streamed_layer_;           // its attention layer
    size_t streamed_index_ = 0;
};

// Greedy decoding: `prompt` (non-empty, e.g. {BOS}) followed by up to `steps` argmax tokens,
// stopping early at one of `end_ids` (llama2.c's BOS by default, as run.c stops; a Hugging Face
// model's EOS) or at the model's seq_len. Returns prompt + generated ids.
// on_token (if set) is told after each generated token (of at most min(steps, seq_len - prompt)).
std::vector<int> greedy_generate(LlamaModel& model, const std::vector<int>& prompt, int steps, const StepCallback& on_token = {},
                                 const std::vector<int>& end_ids = {Llama2cTokenizer::bos_id});

}  // namespace attn_viz
