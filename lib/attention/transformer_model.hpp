// A whole LayerNorm transformer (GPT-2, GPT-NeoX/Pythia, BERT: hf_transformer_checkpoint.hpp) run
// over a token sequence on oneDNN:
//   embeddings (+ learned positions, + token type 0) [-> LayerNorm for BERT]
//   -> per block, by the config's variant:
//        pre-norm     x = x + attention(LN1(x)); x = x + mlp(LN2(x))          (GPT-2; NeoX without parallel residual)
//        parallel     x = x + attention(LN1(x)) + mlp(LN2(x))                 (GPT-NeoX)
//        post-norm    x = LN1(x + attention(x)); x = LN2(x + mlp(x))          (BERT)
//      with mlp(x) = GELU(x W_in + b_in) W_out + b_out
//   [-> final LayerNorm -> logits x classifier]   (decoders; an encoder has no logits)
// Every layer's attention is kept for drawing (run), or handed to a visitor block by block
// (run_blocks), as LlamaModel does.
#pragma once

#include <memory>
#include <vector>

#include "attention.hpp"
#include "hf_transformer_checkpoint.hpp"
#include "model_run.hpp"
#include "onednn_backend.hpp"
#include "whole_model.hpp"

namespace attn_viz {

class TransformerModel : public WholeModel {
public:
    // Builds one AttentionLayer per block; `backend` must outlive the model.
    TransformerModel(OnednnBackend& backend, TransformerWeights weights);

    const TransformerWeights& weights() const { return weights_; }
    const ModelDescription& description() const override { return description_; }
    std::vector<const LayerWeights*> attention_weights() const override;
    // False for an encoder (BERT): its runs have empty logits.
    bool has_logits() const override { return !weights_.classifier.empty(); }
    uint64_t fingerprint() const override;

    // tokens: T ids, 1 <= T <= max_positions, each below the vocabulary size (Error(bad_input)
    // otherwise); the blocks as WholeModel::run_blocks says. The run's hidden_states are the
    // final hidden states ([T, D], after the final LayerNorm of a decoder); its logits are [T, V]
    // for a decoder and empty for an encoder.
    ModelRun run_blocks(const std::vector<int>& tokens, bool with_contributions, bool with_value_norms,
                        const BlockVisitor& visit) override;

    // The logits [T, V] when block `layer`'s attention output is `attention_output` [T, D]: block
    // `layer` finishes in its variant's arrangement (pre-norm, parallel or post-norm) from
    // run.residual[layer], the later blocks rerun. Error(internal) for an encoder.
    Tensor logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output) override;

private:
    // x: [T, D] the residual stream entering block l -> the input of its attention (LN1(x), or x
    // itself when post-norm).
    Tensor attention_input(size_t l, const Tensor& x) const;
    // x: [T, D] the residual stream entering block l -> leaving it, given the block's attention
    // output `attended` [T, D], in place.
    void finish_block(size_t l, Tensor& x, const Tensor& attended);
    // x: [T, D] the residual stream after the last block -> the final hidden states [T, D].
    Tensor final_hidden_states(Tensor x) const;

    OnednnBackend& backend_;
    TransformerWeights weights_;
    ModelDescription description_;
    std::vector<std::unique_ptr<AttentionLayer>> attention_;
};

}  // namespace attn_viz
