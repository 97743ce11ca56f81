// llama2.c checkpoints ("version 0" / legacy export, as karpathy's tinyllamas): seven int32 header
// fields, then float32 arrays with matrices stored [out, in]. Loaded into a whole Llama model's
// weights with every matrix converted to the x W convention of LayerWeights.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "activation.hpp"
#include "layer_weights.hpp"
#include "load_limits.hpp"
#include "tensor.hpp"

namespace attn_viz {

struct Llama2cConfig {
    int64_t dim = 0;         // D
    int64_t hidden_dim = 0;  // F, the feed-forward width
    int64_t n_layers = 0;
    int64_t n_heads = 0;
    int64_t n_kv_heads = 0;
    int64_t vocab_size = 0;  // V (the header's sign only says whether the classifier is shared)
    int64_t seq_len = 0;     // the longest sequence the model was trained for
    bool shared_classifier = true;
    double rms_epsilon = 1e-5;  // RMSNorm's epsilon (llama2.c's; GGUF files name theirs)
    double rope_base = 10000.0;  // RoPE frequency base
    Activation activation = Activation::silu;  // of the gate (Hugging Face folders' hidden_act)
};

// One transformer block: RMSNorm -> attention -> residual -> RMSNorm -> gated feed-forward
// w2(act(x w1 + b1) * (x w3 + b3)) + b2 -> residual.
struct LlamaBlockWeights {
    LayerWeights attention;  // RoPE interleaved, base 10000, causal, no biases
    Tensor rms_attention;    // [D]
    Tensor rms_ffn;          // [D]
    Tensor w1;               // [D, F] gate, used as x W
    Tensor w2;               // [F, D] down
    Tensor w3;               // [D, F] up
    Tensor b1, b2, b3;       // [F], [D], [F] (Llama's mlp_bias), or empty
};

struct LlamaWeights {
    Llama2cConfig config;
    std::vector<LlamaBlockWeights> layers;  // every block, or empty when load_block streams them
    // When set: block l (0 <= l < n_layers) read and converted to float32 on demand, so a model
    // holds one block's feed-forward weights at a time (a GGUF file stays mapped meanwhile).
    std::function<LlamaBlockWeights(int64_t layer)> load_block;
    Tensor token_embedding;  // [V, D], row t is token t's embedding
    Tensor rms_final;        // [D]
    Tensor classifier;       // [D, V], logits = x classifier
};

// Every count positive and bounded (dim <= 2^15, hidden_dim <= 2^17, n_layers <= 2^10, vocab and
// seq_len <= 2^20, so no product of them overflows), heads dividing dim, KV heads dividing heads,
// an even head size; else Error(bad_input) "<path>: <field> <name> = <value> is outside ..<hint>".
void validate_llama_config(const Llama2cConfig& config, const std::string& path, const std::string& field, const std::string& hint);

// A block's attention in LayerWeights' convention (causal, interleaved RoPE at config.rope_base,
// no biases) from x W matrices w_q: [D, D], w_k, w_v: [D, KV * d_h], w_o: [D, D]; validated
// (Error(bad_input) naming `where`).
LayerWeights llama_attention_weights(const Llama2cConfig& config, Tensor w_q, Tensor w_k, Tensor w_v, Tensor w_o,
                                     const std::string& where);

// Validates the header (every count positive and bounded, heads dividing dim, KV heads dividing
// heads, even head size) and that the file holds exactly the arrays it declares, before
// allocating; each array must fit limits.memory_budget and be finite unless the limits allow
// others. Throws Error(bad_input) naming the file (and the array).
LlamaWeights read_llama2c_checkpoint(const std::string& path, const LoadLimits& limits = {});

}  // namespace attn_viz
