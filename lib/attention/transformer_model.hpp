// A whole LayerNorm transformer (GPT-2, GPT-NeoX/Pythia, BERT: hf_transformer_checkpoint.hpp) run
// over a token sequence on oneDNN:
//   embeddings (+ learned positions, + token type 0) [-> LayerNorm for BERT]
//   -> per block, by the config's variant:
//        pre-norm     x = x + attention(LN1(x)); x = x + mlp(LN2(x))          (GPT-2; NeoX without parallel residual)
//        parallel     x = x + attention(LN1(x)) + mlp(LN2(x))                 (GPT-NeoX)
//        post-norm    x = LN1(x + attention(x)); x = LN2(x + mlp(x))          (BERT)
//      with mlp(x) = GELU(x W_in + b_in) W_out + b_out
//   [-> final LayerNorm -> logits x classifier]   (decoders; an encoder has no logits)
// Every layer's attention is kept for drawing, as LlamaModel keeps it.
#pragma once

#include <memory>
#include <vector>

#include "attention.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "model_run.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

class TransformerModel {
public:
    // Builds one AttentionLayer per block; `backend` must outlive the model.
    TransformerModel(OnednnBackend& backend, TransformerWeights weights);

    const TransformerWeights& weights() const { return weights_; }
    // False for an encoder (BERT): its runs have empty logits.
    bool has_logits() const { return !weights_.classifier.empty(); }

    // tokens: T ids, 1 <= T <= max_positions, each below the vocabulary size (Error(bad_input)
    // otherwise). with_contributions: fill each LayerResult's per-head output shares.
    // The run's hidden_states are the final hidden states ([T, D], after the final LayerNorm of a
    // decoder); its logits are [T, V] for a decoder and empty for an encoder.
    ModelRun run(const std::vector<int>& tokens, bool with_contributions = true);

private:
    OnednnBackend& backend_;
    TransformerWeights weights_;
    std::vector<std::unique_ptr<AttentionLayer>> attention_;
};

}  // namespace attn_viz
