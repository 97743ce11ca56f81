// The weights of a whole transformer of any family attn-viz runs, in one convention whatever file
// they came from (every matrix x W): a block is data (which norm, which feed-forward, which
// residual arrangement), so one forward pass (whole_model.hpp) runs every family. A reader of a
// new family fills a ModelWeights; only a block the enums below cannot describe needs a new value.
//   Llama family (llama2.c, GGUF llama, Hugging Face llama/mistral/qwen2/qwen3/phi3): rms, gated, pre_norm.
//   Gemma (Hugging Face gemma, gemma2, gemma3_text): rms_offset_one, gated (GeGLU), scaled embeddings; 2/3 sandwich.
//   OLMo 2: rms, gated, post_sublayer, q/k norms across heads.  Granite: Llama's with four multipliers.
//   GPT-2: layer_norm, plain, pre_norm, learned positions.  GPT-NeoX: layer_norm, plain, parallel.
//   BERT: layer_norm, plain, post_norm, learned positions, token type row, embedding norm, no classifier.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "activation.hpp"
#include "layer_weights.hpp"
#include "tensor.hpp"

namespace attn_viz {

enum class NormKind {
    rms,             // x / sqrt(mean(x^2) + eps) * weight
    rms_offset_one,  // x / sqrt(mean(x^2) + eps) * (1 + weight) (Gemma; weights stored as w, not 1 + w)
    layer_norm,      // (x - mean(x)) / sqrt(var(x) + eps) * weight + bias
};

enum class FeedForwardKind {
    gated,  // (act(x w_in + b_in) * (x w_up + b_up)) w_out + b_out
    plain,  // act(x w_in + b_in) w_out + b_out
};

enum class ResidualLayout {
    pre_norm,       // x = x + attention(N1(x)); x = x + ffn(N2(x))
    parallel,       // x = x + attention(N1(x)) + ffn(N2(x))
    post_norm,      // x = N1(x + attention(x)); x = N2(x + ffn(x))
    sandwich,       // x = x + N1'(attention(N1(x))); x = x + N2'(ffn(N2(x)))  (Gemma 2/3: pre- and post-norms)
    post_sublayer,  // x = x + N1'(attention(x)); x = x + N2'(ffn(x))  (OLMo 2: norms on each sublayer's output only)
};

struct NormWeights {
    Tensor weight;  // [D], or empty where the model has no such norm
    Tensor bias;    // [D] for layer_norm; empty for rms
};

struct ModelConfig {
    // "llama" (every Llama-family format), "gpt2", "gpt_neox", "bert": the block shape, hashed by
    // the weight fingerprints (weights_fingerprint.hpp), so it stays "llama" for every decoder row.
    std::string architecture;
    std::string family;   // the family table's name ("llama", "mistral", "gemma2", ...; family_table.hpp)
    int64_t d_model = 0;  // D
    int64_t ffn_dim = 0;  // F, the feed-forward width
    int64_t n_layers = 0;
    int64_t n_heads = 0;
    int64_t n_kv_heads = 0;
    int64_t head_dim = 0;            // d_h: config.json's head_dim where it sets one, else d_model / n_heads
    int64_t vocab_size = 0;          // V
    int64_t max_tokens = 0;          // the longest sequence a run takes (seq_len, max_position_embeddings)
    bool shared_classifier = false;  // the classifier is the token embedding, transposed
    NormKind norm = NormKind::rms;
    double norm_epsilon = 1e-5;
    FeedForwardKind feed_forward = FeedForwardKind::gated;
    Activation activation = Activation::silu;  // of the gate (gated) or the hidden layer (plain)
    ResidualLayout residual = ResidualLayout::pre_norm;
    double rope_base = 10000.0;    // the Llama-family readers' RoPE base for every block (LayerWeights holds what runs)
    float embedding_scale = 1.0f;  // token embeddings times this (Gemma: sqrt(D) rounded to float, as transformers)
    double final_logit_softcap = 0.0;  // logits -> cap * tanh(logits / cap) (Gemma 2); 0 = none
    double residual_scale = 1.0;       // each sublayer's output times this before its residual add (Granite)
    double logits_scaling = 1.0;       // logits divided by this, before any soft-cap (Granite)
};

struct BlockWeights {
    LayerWeights attention;
    NormWeights attention_norm;  // pre_norm/parallel/sandwich: before attention; post_norm: after attention + residual
    NormWeights feed_forward_norm;         // likewise around the feed-forward (post_sublayer: neither)
    NormWeights attention_output_norm;     // sandwich, post_sublayer: N1', on the attention output before the add
    NormWeights feed_forward_output_norm;  // sandwich, post_sublayer: N2', on the feed-forward output
    // The feed-forward's matrices a row per output, as nn.Linear and GGUF keep them (linear_out_in).
    Tensor w_in;               // [F, D] (gated: the gate)
    Tensor w_up;               // [F, D] gated only: the projection the gate multiplies; empty for plain
    Tensor w_out;              // [D, F]
    Tensor b_in, b_up, b_out;  // [F], [F], [D], or empty
};

// Where a model's blocks come from: held in memory (HeldBlocks), or read from a mapped file and
// converted to float32 when asked (StreamedDecoderBlocks, decoder_blocks.hpp), so that a model
// holds one block's weights at a time. A source is never changed once made: models share it.
class BlockSource {
public:
    virtual ~BlockSource() = default;
    virtual int64_t n_layers() const = 0;
    // Whether load reads each block when called (nothing held) rather than copying a held one.
    virtual bool streams() const = 0;
    // Block `layer` (0 <= layer < n_layers()) held in memory, or nullptr when the source streams.
    virtual const BlockWeights* held(int64_t layer) const = 0;
    // Block `layer`, a copy or freshly read. Error(bad_input) naming the file for a bad one.
    virtual BlockWeights load(int64_t layer) const = 0;
    // Block `layer` into `block`, a BlockWeights that is empty or was filled by this source
    // before, in the memory its tensors have where that is enough, so that refilling one
    // BlockWeights block after block allocates (and page-faults) its weights once.
    virtual void load_into(int64_t layer, BlockWeights& block) const = 0;
};

// How a reader whose container is mapped (safetensors, GGUF) gives a decoder's blocks: every
// block read now, or streamed from the file (StreamedDecoderBlocks).
enum class BlockLoading { held, streamed };

// Every block in memory, as a reader made them.
class HeldBlocks final : public BlockSource {
public:
    explicit HeldBlocks(std::vector<BlockWeights> blocks) : blocks_(std::move(blocks)) {}
    int64_t n_layers() const override { return static_cast<int64_t>(blocks_.size()); }
    bool streams() const override { return false; }
    const BlockWeights* held(int64_t layer) const override { return &blocks_.at(static_cast<size_t>(layer)); }
    BlockWeights load(int64_t layer) const override { return *held(layer); }
    void load_into(int64_t layer, BlockWeights& block) const override { block = *held(layer); }
    // The blocks, for a source not yet shared (a test that edits a model's weights makes its own).
    std::vector<BlockWeights>& blocks() { return blocks_; }

private:
    std::vector<BlockWeights> blocks_;
};

// A BertForMaskedLM's prediction head (cls.predictions.*): the logits of the token at each position,
// LN(act(h W^T + b)) E^T + bias, E the token embedding (tied) or its own decoder matrix.
struct MaskedLmHead {
    Tensor transform;       // [D, D] (out, in)
    Tensor transform_bias;  // [D]
    NormWeights norm;       // LayerNorm of the model's epsilon
    Tensor decoder;         // [V, D] when untied; empty: the token embedding
    Tensor bias;            // [V]
    bool empty() const { return transform.empty(); }
};

struct ModelWeights {
    ModelConfig config;
    std::shared_ptr<const BlockSource> blocks;  // config.n_layers blocks, held or streamed
    Tensor token_embedding;                     // [V, D], row t is token t's embedding
    Tensor position_embedding;                  // [max_tokens, D] learned positions, or empty (RoPE, in the attention)
    Tensor token_type_embedding;  // [types, D] BERT's token type rows (a token's type row added to it); or empty
    NormWeights embedding_norm;   // on the summed embeddings (BERT), or empty
    NormWeights final_norm;       // before the classifier, or empty (BERT)
    Tensor classifier;            // [V, D], a row per token: logits = x classifier^T; empty for an encoder
                                  // and when config.shared_classifier (read classifier_matrix())
    MaskedLmHead masked_lm;       // an encoder folder's masked-LM head, or empty

    // The classifier [V, D]: the token embedding itself when the two are shared (one copy in
    // memory: 2.4 GB for Gemma 2's 256k x 2304), else `classifier`; empty for an encoder.
    const Tensor& classifier_matrix() const { return config.shared_classifier ? token_embedding : classifier; }

    // Block `layer`: the one held, or (streaming) read into `scratch`, refilling the block it holds
    // (its weights allocated once). A block left half-read by an error is not kept (`scratch` is
    // then empty).
    const BlockWeights& block(int64_t layer, std::optional<BlockWeights>& scratch) const;
};

}  // namespace attn_viz
