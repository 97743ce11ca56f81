// Hugging Face model folders of the families other than Llama's: GPT-2 (model_type gpt2), GPT-NeoX
// (gpt_neox: Pythia) and BERT (bert). config.json and model.safetensors (or its shards) are read
// into ModelWeights with LayerNorm and a plain MLP, every matrix in the x W convention:
//   gpt2      learned positions (wpe), pre-norm blocks, Conv1D weights (already [in, out]),
//             fused c_attn, GELU tanh approximation, lm_head tied to wte; names with or without
//             the "transformer." prefix.
//   gpt_neox  rotary positions on the first rotary_pct of each head (half-split), fused
//             query_key_value with per-head interleaved [q, k, v] rows, parallel residual layout
//             (use_parallel_residual; pre-norm otherwise), exact GELU, separate embed_out.
//   bert      an encoder (no causal mask; is_decoder: causal), word + position + token type 0
//             embeddings then LayerNorm, post-norm blocks, exact GELU, no next-token classifier.
#pragma once

#include <string>
#include <vector>

#include "hf_config.hpp"
#include "load_limits.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// The model types read_hf_transformer_folder reads: "gpt2", "gpt_neox", "bert".
const std::vector<std::string>& hf_transformer_model_types();

// Every model type a Hugging Face folder may have: the Llama family's (hf_llama_checkpoint.hpp),
// the above and the encoder-decoders (hf_seq2seq_checkpoint.hpp), for messages.
std::vector<std::string> hf_model_types();

// Throws Error(bad_input) naming config.json for another architecture (listing every supported
// one), a missing hyper-parameter or an option the forward pass does not implement; naming the
// checkpoint for a missing or misshapen tensor; Error(io) when a file cannot be read.
ModelWeights read_hf_transformer_folder(const std::string& folder, const LoadLimits& limits = {});

// As above, with the folder's config.json already parsed (model_files.hpp parses it once).
ModelWeights read_hf_transformer_folder(const std::string& folder, const HfConfig& config,
                                        const LoadLimits& limits = {});

}  // namespace attn_viz
