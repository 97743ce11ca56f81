// Hugging Face model folders of the Llama family (model_type llama, mistral, qwen2: Llama 2/3,
// TinyLlama, SmolLM, Mistral, Qwen2): config.json and model.safetensors (or its shards) read into
// ModelWeights (RMSNorm, gated feed-forward, pre-norm) in the x W convention, with HF's half-split
// RoPE (rope_scaling linear or llama3, v4 keys or v5 rope_parameters), GQA, head_dim, hidden_act,
// Llama's attention_bias and mlp_bias, Qwen2's q/k/v biases, Mistral's and Qwen2's sliding windows. Tied embeddings (no
// lm_head.weight) share the embedding matrix as the classifier. docs/formats.md lists every key.
#pragma once

#include <string>
#include <vector>

#include "hf_config.hpp"
#include "load_limits.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// The model types this loader reads.
const std::vector<std::string>& hf_llama_model_types();

// Throws Error(bad_input) naming config.json for another architecture (listing the supported
// ones), a missing hyper-parameter, or a RoPE scaling other than linear and llama3; naming the checkpoint for a missing or
// misshapen tensor; Error(io) when a file cannot be read.
ModelWeights read_hf_llama_folder(const std::string& folder, const LoadLimits& limits = {});

// As above, with the folder's config.json already parsed (model_files.hpp parses it once).
ModelWeights read_hf_llama_folder(const std::string& folder, const HfConfig& config, const LoadLimits& limits = {});

}  // namespace attn_viz
