// llama2.c checkpoints ("version 0" / legacy export, as karpathy's tinyllamas): seven int32 header
// fields, then float32 arrays with matrices stored [out, in]. Loaded into ModelWeights (RMSNorm,
// gated SiLU feed-forward, pre-norm) with every matrix converted to the x W convention of
// LayerWeights; also the Llama family's config checks and attention, which the GGUF reader shares.
#pragma once

#include <string>

#include "layer_weights.hpp"
#include "load_limits.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// Every count positive and bounded (d_model <= 2^15, ffn_dim <= 2^17, n_layers <= 2^10, vocab and
// max_tokens <= 2^20, so no product of them overflows), heads dividing dim, KV heads dividing heads,
// an even head size; else Error(bad_input) "<path>: <field> <name> = <value> is outside ..<hint>".
void validate_llama_config(const ModelConfig& config, const std::string& path, const std::string& field,
                           const std::string& hint);

// A block's attention in LayerWeights' convention (causal, interleaved RoPE at config.rope_base,
// no biases) from x W matrices w_q: [D, D], w_k, w_v: [D, KV * d_h], w_o: [D, D]; validated
// (Error(bad_input) naming `where`).
LayerWeights llama_attention_weights(const ModelConfig& config, Tensor w_q, Tensor w_k, Tensor w_v, Tensor w_o,
                                     const std::string& where);

// Validates the header (every count positive and bounded, heads dividing dim, KV heads dividing
// heads, even head size) and that the file holds exactly the arrays it declares, before
// allocating; each array must fit limits.memory_budget and be finite unless the limits allow
// others. Throws Error(bad_input) naming the file (and the array).
ModelWeights read_llama2c_checkpoint(const std::string& path, const LoadLimits& limits = {});

}  // namespace attn_viz
