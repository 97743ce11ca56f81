// A whole Llama-style decoder (llama2.c's architecture) run over a token sequence on oneDNN:
// embeddings -> per block RMSNorm, attention (RoPE, GQA, causal), residual, RMSNorm, SwiGLU
// feed-forward, residual -> final RMSNorm -> logits. Every layer's attention is kept for drawing.
#pragma once

#include <memory>
#include <vector>

#include "attention.hpp"
#include "llama2c_checkpoint.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

struct ModelRun {
    std::vector<int> tokens;          // the T input ids
    std::vector<LayerResult> layers;  // per block: attention [H, T, T], margins, context, output, ...
    Tensor logits;                    // [T, V]: row t predicts token t + 1
};

class LlamaModel {
public:
    // Builds one AttentionLayer per block (weights repacked once); `backend` must outlive the model.
    LlamaModel(OnednnBackend& backend, LlamaWeights weights);

    const LlamaWeights& weights() const { return weights_; }

    // tokens: T ids, 1 <= T <= seq_len, each below the vocabulary size (Error(bad_input) otherwise).
    // with_contributions: fill each LayerResult's per-head output shares (slightly more work).
    ModelRun run(const std::vector<int>& tokens, bool with_contributions = true);

private:
    OnednnBackend& backend_;
    LlamaWeights weights_;
    std::vector<std::unique_ptr<AttentionLayer>> attention_;
};

// Greedy decoding: `prompt` (non-empty, e.g. {BOS}) followed by up to `steps` argmax tokens,
// stopping early at BOS as llama2.c does or at the model's seq_len. Returns prompt + generated ids.
std::vector<int> greedy_generate(LlamaModel& model, const std::vector<int>& prompt, int steps);

}  // namespace attn_viz
