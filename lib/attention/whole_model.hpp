// A whole transformer of any family (model_weights.hpp: llama2.c, GGUF and Hugging Face
// Llama-family models, Gemma 2/3, GPT-2, GPT-NeoX/Pythia, BERT) run over a token sequence on oneDNN, its
// blocks run from what their data says:
//   embeddings [x scale] (+ learned positions, + token type 0) [-> embedding norm]
//   -> per block, by config.residual, with N1/N2 its norms (config.norm: RMSNorm or LayerNorm):
//        pre_norm     x = x + attention(N1(x)); x = x + ffn(N2(x))      (Llama, GPT-2, NeoX without parallel residual)
//        parallel     x = x + attention(N1(x)) + ffn(N2(x))             (GPT-NeoX)
//        post_norm    x = N1(x + attention(x)); x = N2(x + ffn(x))      (BERT)
//        sandwich     x = x + N1'(attention(N1(x))); x = x + N2'(ffn(N2(x)))  (Gemma 2/3)
//        post_sublayer x = x + N1'(attention(x)); x = x + N2'(ffn(x))    (OLMo 2)
//      with ffn gated (Llama's SwiGLU) or plain (GELU MLP) by config.feed_forward
//   [-> final norm] [-> logits x classifier [-> soft-capped]]   (an encoder has no classifier and no logits)
// Every layer's attention is kept for drawing (run), or handed to a visitor block by block and
// not kept (run_blocks); a model whose blocks stream (BlockSource::streams) holds one block at a time.
// Model mode, its analyses, generation and compare take any model; open_whole_model opens any
// supported path.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention.hpp"
#include "hf_tokenizer.hpp"
#include "layer_weights.hpp"
#include "llama2c_tokenizer.hpp"
#include "load_limits.hpp"
#include "model_files.hpp"
#include "model_run.hpp"
#include "model_weights.hpp"
#include "onednn_backend.hpp"
#include "timings.hpp"
#include "weights_fingerprint.hpp"

namespace attn_viz {

// Told after each step of a long computation: `done` steps of `total` (a progress display).
using StepCallback = std::function<void(int64_t done, int64_t total)>;

// Told after block `layer`'s attention and feed-forward: its attention result (the visitor may
// move it away), the residual stream [T, D] that entered the block (likewise) and the block's
// attention weights (valid during the call only).
using BlockVisitor =
    std::function<void(size_t layer, LayerResult& result, Tensor& residual, const LayerWeights& weights)>;

// Told after block `layer` has run on sequence `sequence` (its index in the batch) of a batch
// pass: its attention result (the visitor may move it away) and the block's attention weights
// (valid during the call only).
using BatchBlockVisitor =
    std::function<void(size_t sequence, size_t layer, LayerResult& result, const LayerWeights& weights)>;

// The shape of a whole model, for checks, messages and reports.
struct ModelDescription {
    std::string architecture;  // "llama" (every Llama-family format), "gpt2", "gpt_neox", "bert"
    int64_t n_layers = 0, n_heads = 0, n_kv_heads = 0, dim = 0, vocab_size = 0;
    int64_t head_dim = 0;    // d_h, which a Hugging Face config.json may set apart from dim / n_heads
    int64_t max_tokens = 0;  // the longest sequence a run takes (seq_len, max_position_embeddings)
    // The token types a run tells apart (BERT's type_vocab_size, 2): below 2, every token runs
    // as type 0 whatever types a run is given (ForwardRequest::token_types).
    int64_t token_types = 0;
};

// "path (llama, 5 layers x 8 heads)": the model at `path` as report.html names it.
std::string model_description(const std::string& path, const ModelDescription& model);

// What a forward pass computes beside each layer's maps.
struct ForwardRequest {
    bool contributions = true;  // each LayerResult's per-head output shares
    bool value_norms = false;   // each LayerResult's value_norms (for norm-based maps)
    // The next-token logits [T, V] (models with logits): a product by the whole vocabulary (at
    // T = 2047 a 7B model's costs 2.7 s), which only analyses that read logits need.
    bool logits = true;
    // The input's token types, one per token (a BERT text pair: segment A 0, segment B 1), or
    // empty for every token of type 0. Used by a model with two or more token type rows (BERT);
    // a model with one row or none (RoBERTa, GPT-2) runs every token as type 0, as transformers
    // does, whose tokenizers give such a model no token_type_ids.
    std::vector<int> token_types = {};
};

class WholeModel {
public:
    // Builds one AttentionLayer per block (weights repacked once), or, when `weights` streams its
    // blocks, loads nothing yet: a pass loads each block when it reaches it, replacing the
    // previous one (one block's weights at a time; in the previous one's memory where the
    // weights can be loaded into it, BlockSource::load_into). `backend` must outlive the model.
    WholeModel(OnednnBackend& backend, ModelWeights weights);

    const ModelWeights& weights() const { return weights_; }
    const ModelDescription& description() const { return description_; }
    // Every block's attention weights (for the report's weight similarities and head ablation). A
    // streamed model keeps a copy of each block's attention weights when a pass first loads the
    // block (unless keep_attention_weights(false)) and loads here the blocks no pass has loaded yet.
    std::vector<const LayerWeights*> attention_weights() const;
    // False for an encoder (BERT): its runs have empty logits and logits_from is not available.
    bool has_logits() const { return !weights_.classifier_matrix().empty(); }
    // True for an encoder folder with its masked-LM head (BertForMaskedLM's cls.predictions.*).
    bool has_masked_lm() const { return !weights_.masked_lm.empty(); }
    // hidden_states: [T, D] final hidden states -> the masked-LM head's logits [T, V] (has_masked_lm()).
    Tensor masked_lm_logits(const Tensor& hidden_states);
    // The model's weights as a 64-bit fingerprint (weights_fingerprint.hpp), naming what a corpus
    // partial was computed from; on_block (if set) is shown every block on the way (a streamed
    // model's blocks are read for it and not kept).
    uint64_t fingerprint(const BlockObserver& on_block = {}) const;

    // tokens: T ids, 1 <= T <= max_tokens, each below the vocabulary size (Error(bad_input)
    // otherwise); `request`: what is computed beside the maps; on_layer (if set) is told after
    // each block. The run records the residual stream entering each block (run_blocks keeping
    // what it is handed).
    ModelRun run(const std::vector<int>& tokens, const ForwardRequest& request = {}, const StepCallback& on_layer = {});

    // As run, but each block's result and residual go to `visit` as soon as the block is done
    // instead of into the run: the returned run has the tokens, the final residual stream, hidden
    // states (after the final norm, where the model has one) and logits [T, V] (when asked; empty
    // for an encoder), and no layers or residuals. Memory holds one block's results at a time if
    // `visit` lets them go (--stream-layers, model_stream.hpp).
    ModelRun run_blocks(const std::vector<int>& tokens, const ForwardRequest& request, const BlockVisitor& visit);

    // The sequences of `batch` (each as run takes tokens and token types) layer-major: each block is loaded once
    // (a streamed model: read and decoded once per batch, not once per sequence) and run on every
    // sequence's residual stream in batch order before the next block; each block's result goes
    // to `visit` as run_blocks' do, with the same numbers as run_blocks on that sequence alone.
    // Memory holds the batch's residual streams [T_i, D] and one block. No final norm or
    // logits. `timings` (if set) gets the time spent loading blocks as "block loads".
    void run_batch_blocks(const std::vector<EncodedText>& batch, bool with_contributions, bool with_value_norms,
                          const BatchBlockVisitor& visit, Timings* timings = nullptr);

    // Whether passes of a streamed model keep each block's attention weights for
    // attention_weights() (default true); false bounds memory by one block (run_blocks' visitor
    // sees each block's weights anyway). A model holding every block has nothing to let go.
    void keep_attention_weights(bool keep) { keep_attention_ = keep; }
    bool keeps_attention_weights() const { return keep_attention_; }

    // The logits [T, V] when block `layer`'s attention output is `attention_output` [T, D] instead
    // of run.layers[layer].output: block `layer` finishes in its residual layout from
    // run.residual[layer], the later blocks rerun, the blocks before it are reused from `run`.
    // Error(internal) for an encoder.
    Tensor logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output);
    // The same rerun's final hidden states [T, D] (after the final norm, where the model has one):
    // what an encoder's ablation compares.
    Tensor hidden_states_from(const ModelRun& run, size_t layer, const Tensor& attention_output);

private:
    // tokens: T ids, token_types: T types or none -> the residual stream entering block 0: [T, D]
    Tensor embedded(const std::vector<int>& tokens, const std::vector<int>& token_types) const;
    // x: [T, D] the residual stream entering block l -> the input of its attention (N1(x), or x
    // itself when post-norm).
    Tensor attention_input(size_t l, const Tensor& x);
    // x: [T, D] the residual stream entering block l -> leaving it, given the block's attention
    // output `attended` [T, D], in place.
    void finish_block(size_t l, Tensor& x, const Tensor& attended);
    // x: [T, D] the residual stream entering block l -> leaving it, in place; returns the
    // block's attention result.
    LayerResult run_block(size_t l, Tensor& x, bool with_contributions, bool with_value_norms);
    // x: [T, D] the residual stream after the last block -> the final hidden states [T, D].
    Tensor final_hidden_states(Tensor x) const;
    // hidden_states: [T, D] -> logits [T, V], soft-capped where the model says (Gemma 2).
    Tensor logits_of(const Tensor& hidden_states);
    // x: [T, D] -> `norm` of it by the model's norm kind and epsilon.
    Tensor normalized_by(const Tensor& x, const NormWeights& norm) const;
    // Block l's weights and attention layer: the model's own, or (streaming) loaded now unless
    // block l was the last one loaded.
    const BlockWeights& block(size_t l);
    AttentionLayer& attention_layer(size_t l);

    OnednnBackend& backend_;
    ModelWeights weights_;
    ModelDescription description_;
    std::vector<std::unique_ptr<AttentionLayer>> attention_;  // one per block unless streaming
    mutable std::vector<std::optional<LayerWeights>>
        streamed_attention_;  // streaming: the blocks' attention kept so far
    bool keep_attention_ = true;
    std::optional<BlockWeights> streamed_block_;      // streaming: the block loaded last
    std::unique_ptr<AttentionLayer> streamed_layer_;  // its attention layer
    size_t streamed_index_ = 0;
};

// The model in `files` (model_files.hpp: a Hugging Face folder of a supported model_type, a GGUF
// file, a llama2.c checkpoint; read_model_weights says which families), or at `path`.
// `backend` must outlive the model.
std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const ModelFiles& files,
                                             const LoadLimits& limits = {});
std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const std::string& path,
                                             const LoadLimits& limits = {});

// Greedy decoding: `prompt` (non-empty, e.g. {BOS}) followed by up to `steps` argmax tokens,
// stopping early at one of `end_ids` (llama2.c's BOS, a Hugging Face model's EOS) or at the
// model's max_tokens. Returns prompt + generated ids. The model must have logits and a causal mask.
// on_token (if set) is told after each generated token (of at most min(steps, max_tokens - prompt)).
// choices > 0: the argmax is over the ids below it (the tokenizer's tokens, where the model's
// vocabulary has padding rows past them, as Pythia's has); 0: over the whole vocabulary.
std::vector<int> greedy_generate(WholeModel& model, const std::vector<int>& prompt, int steps,
                                 const StepCallback& on_token = {},
                                 const std::vector<int>& end_ids = {Llama2cTokenizer::bos_id}, int64_t choices = 0);

}  // namespace attn_viz
