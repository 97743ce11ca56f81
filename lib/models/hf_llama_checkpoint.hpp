// Hugging Face model folders of the Llama-like decoder families (family_table.hpp: llama,
// mistral, ministral, qwen2, qwen3, gemma, gemma2, gemma3_text, phi3: Llama 2/3, TinyLlama, SmolLM, Mistral, Qwen2/3,
// Gemma 1/2/3 text, Phi-3/Phi-4-mini): config.json and model.safetensors (or its shards) read into
// ModelWeights in the x W convention, with HF's half-split RoPE (rope_scaling linear or llama3, v4
// keys or v5 rope_parameters), GQA, head_dim, hidden_act, each family's biases, sliding windows
// and what else its row in the family table says (q/k norms, Gemma's (1 + w) sandwich norms, scaled
// embeddings, soft-caps and local RoPE base, Phi-3's fused projections and partial rotary). Tied
// embeddings (no lm_head.weight) share the embedding matrix as the classifier. docs/formats.md
// lists every key.
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
// ones), a missing hyper-parameter, or a RoPE scaling other than linear and llama3; naming the checkpoint for a missing
// or misshapen tensor; Error(io) when a file cannot be read.
ModelWeights read_hf_llama_folder(const std::string& folder, const LoadLimits& limits = {});

// As above, with the folder's config.json already parsed (model_files.hpp parses it once); with
// BlockLoading::streamed the blocks stay in the mapped safetensors (StreamedDecoderBlocks: every
// block's tensors checked now, one read when asked).
ModelWeights read_hf_llama_folder(const std::string& folder, const HfConfig& config, const LoadLimits& limits = {},
                                  BlockLoading loading = BlockLoading::held);

}  // namespace attn_viz
