// llama2.c checkpoints ("version 0" / legacy export, as karpathy's tinyllamas): seven int32 header
// fields, then float32 arrays with matrices stored [out, in]. Loaded into a whole Llama model's
// weights with every matrix converted to the x W convention of LayerWeights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
};

// One transformer block: RMSNorm -> attention -> residual -> RMSNorm -> SwiGLU -> residual.
struct LlamaBlockWeights {
    LayerWeights attention;  // RoPE interleaved, base 10000, causal, no biases
    Tensor rms_attention;    // [D]
    Tensor rms_ffn;          // [D]
    Tensor w1;               // [D, F] gate, used as x W
    Tensor w2;               // [F, D] down
    Tensor w3;               // [D, F] up
};

struct LlamaWeights {
    Llama2cConfig config;
    std::vector<LlamaBlockWeights> layers;
    Tensor token_embedding;  // [V, D], row t is token t's embedding
    Tensor rms_final;        // [D]
    Tensor classifier;       // [D, V], logits = x classifier
};

// Validates the header (every count positive and bounded, heads dividing dim, KV heads dividing
// heads, even head size) and that the file holds exactly the arrays it declares, before
// allocating; each array must fit limits.memory_budget and be finite unless the limits allow
// others. Throws Error(bad_input) naming the file (and the array).
LlamaWeights read_llama2c_checkpoint(const std::string& path, const LoadLimits& limits = {});

}  // namespace attn_viz
