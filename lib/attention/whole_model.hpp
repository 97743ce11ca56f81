// One interface over every whole model attn-viz runs (LlamaModel: llama2.c, GGUF and Hugging Face
// Llama-family folders; TransformerModel: GPT-2, GPT-NeoX/Pythia and BERT folders), so that model
// mode, its analyses, generation and compare take any of them; and the loader that opens any
// supported model path as the right one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "layer_weights.hpp"
#include "llama2c_tokenizer.hpp"
#include "load_limits.hpp"
#include "model_run.hpp"
#include "onednn_backend.hpp"

namespace attn_viz {

// Told after each step of a long computation: `done` steps of `total` (a progress display).
using StepCallback = std::function<void(int64_t done, int64_t total)>;

// Told after block `layer`'s attention and feed-forward: its attention result (the visitor may
// move it away), the residual stream [T, D] that entered the block (likewise) and the block's
// attention weights (valid during the call only).
using BlockVisitor = std::function<void(size_t layer, LayerResult& result, Tensor& residual, const LayerWeights& weights)>;

// The shape of a whole model, for checks, messages and reports.
struct ModelDescription {
    std::string architecture;  // "llama" (every Llama-family format), "gpt2", "gpt_neox", "bert"
    int64_t n_layers = 0, n_heads = 0, n_kv_heads = 0, dim = 0, vocab_size = 0;
    int64_t max_tokens = 0;  // the longest sequence a run takes (seq_len, max_position_embeddings)
};

class WholeModel {
public:
    virtual ~WholeModel() = default;

    virtual const ModelDescription& description() const = 0;
    // Every block's attention weights (for the report's weight similarities and head ablation).
    virtual std::vector<const LayerWeights*> attention_weights() const = 0;
    // False for an encoder (BERT): its runs have empty logits and logits_from is not available.
    virtual bool has_logits() const = 0;
    // The model's weights as a 64-bit fingerprint (weights_fingerprint.hpp), naming what a corpus
    // partial was computed from.
    virtual uint64_t fingerprint() const = 0;

    // tokens: T ids, 1 <= T <= max_tokens, each below the vocabulary size (Error(bad_input)
    // otherwise). with_contributions: fill each LayerResult's per-head output shares;
    // with_value_norms: fill each LayerResult's value_norms (for norm-based maps); on_layer (if
    // set) is told after each block. The run records the residual stream entering each block.
    // (run_blocks keeping what it is handed.)
    ModelRun run(const std::vector<int>& tokens, bool with_contributions = true, bool with_value_norms = false,
                 const StepCallback& on_layer = {});

    // As run, but each block's result and residual go to `visit` as soon as the block is done
    // instead of into the run: the returned run has the tokens, hidden states and logits (empty
    // for an encoder), and no layers or residuals. Memory holds one block's results at a time if
    // `visit` lets them go (--stream-layers, model_stream.hpp).
    virtual ModelRun run_blocks(const std::vector<int>& tokens, bool with_contributions, bool with_value_norms,
                                const BlockVisitor& visit) = 0;

    // Whether a model that loads its blocks' weights on demand (a streamed GGUF Llama) keeps a
    // copy of each block's attention weights for attention_weights() (default true); false bounds
    // memory by one block. A model holding every block already has nothing to let go.
    virtual void keep_attention_weights(bool keep) { (void)keep; }

    // The logits [T, V] when block `layer`'s attention output is `attention_output` [T, D] instead
    // of run.layers[layer].output: the rest of the model reruns from there on run.residual[layer],
    // the blocks before it are reused from `run`. Only for models with logits.
    virtual Tensor logits_from(const ModelRun& run, size_t layer, const Tensor& attention_output) = 0;
};

// The model at `path`: a Hugging Face folder (config.json's model_type: llama, mistral, qwen2 ->
// LlamaModel; gpt2, gpt_neox, bert -> TransformerModel; another type is Error(bad_input) naming
// config.json and listing the supported ones), a GGUF file (general.architecture llama ->
// LlamaModel, blocks streamed; gpt2, gptneox -> TransformerModel) or a llama2.c checkpoint (LlamaModel).
// `backend` must outlive the model.
std::unique_ptr<WholeModel> open_whole_model(OnednnBackend& backend, const std::string& path, const LoadLimits& limits = {});

// Greedy decoding: `prompt` (non-empty, e.g. {BOS}) followed by up to `steps` argmax tokens,
// stopping early at one of `end_ids` (llama2.c's BOS, a Hugging Face model's EOS) or at the
// model's max_tokens. Returns prompt + generated ids. The model must have logits and a causal mask.
// on_token (if set) is told after each generated token (of at most min(steps, max_tokens - prompt)).
// choices > 0: the argmax is over the ids below it (the tokenizer's tokens, where the model's
// vocabulary has padding rows past them, as Pythia's has); 0: over the whole vocabulary.
std::vector<int> greedy_generate(WholeModel& model, const std::vector<int>& prompt, int steps, const StepCallback& on_token = {},
                                 const std::vector<int>& end_ids = {Llama2cTokenizer::bos_id}, int64_t choices = 0);

}  // namespace attn_viz
