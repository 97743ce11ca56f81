// Hugging Face model folders of the families other than Llama's: GPT-2 (model_type gpt2), GPT-NeoX
// (gpt_neox: Pythia) and BERT (bert). config.json and model.safetensors (or its shards) are read
// into one description of a LayerNorm transformer, every matrix in the x W convention:
//   gpt2      learned positions (wpe), pre-LayerNorm blocks, Conv1D weights (already [in, out]),
//             fused c_attn, GELU tanh approximation, lm_head tied to wte; names with or without
//             the "transformer." prefix.
//   gpt_neox  rotary positions on the first rotary_pct of each head (half-split), fused
//             query_key_value with per-head interleaved [q, k, v] rows, parallel residual
//             (use_parallel_residual), exact GELU, separate embed_out.
//   bert      an encoder (no causal mask; is_decoder: causal), word + position + token type 0
//             embeddings then LayerNorm, post-LayerNorm blocks, exact GELU, no next-token classifier.
#pragma once

#include <string>
#include <vector>

#include "activation.hpp"
#include "layer_weights.hpp"
#include "load_limits.hpp"

namespace attn_viz {

// (x - mean(x)) / sqrt(var(x) + eps) * weight + bias over each row.
struct LayerNormWeights {
    Tensor weight;  // [D]
    Tensor bias;    // [D]
};

struct TransformerConfig {
    std::string model_type;  // "gpt2", "gpt_neox", "bert"
    int64_t d_model = 0, ffn_dim = 0, vocab_size = 0, num_layers = 0;
    int64_t max_positions = 0;       // the longest sequence a run takes
    double norm_epsilon = 1e-5;
    bool post_norm = false;          // BERT: x = LN(x + f(x)); otherwise x = x + f(LN(x))
    bool parallel_residual = false;  // GPT-NeoX: x = x + attention(LN1(x)) + mlp(LN2(x))
    Activation activation = Activation::gelu_erf;
};

struct TransformerBlockWeights {
    LayerWeights attention;
    LayerNormWeights attention_norm;  // pre-norm: before attention; post-norm: after attention + residual
    LayerNormWeights mlp_norm;        // likewise around the MLP
    Tensor w_in;   // [D, F]
    Tensor b_in;   // [F] or empty
    Tensor w_out;  // [F, D]
    Tensor b_out;  // [D] or empty
};

struct TransformerWeights {
    TransformerConfig config;
    std::vector<TransformerBlockWeights> layers;
    Tensor token_embedding;           // [V, D]
    Tensor position_embedding;        // [P, D] learned positions, or empty (rotary, in the attention)
    Tensor token_type_embedding;      // [D] BERT's token type 0 row, added at every position; or empty
    LayerNormWeights embedding_norm;  // BERT: on the summed embeddings; empty otherwise
    LayerNormWeights final_norm;      // decoders: before the classifier; empty for BERT
    Tensor classifier;                // [D, V], logits = x classifier; empty for an encoder
};

// The model types read_hf_transformer_folder reads: "gpt2", "gpt_neox", "bert".
const std::vector<std::string>& hf_transformer_model_types();

// Every model type a Hugging Face folder may have: the Llama family's (hf_llama_checkpoint.hpp)
// and the above, for messages.
std::vector<std::string> hf_model_types();

// Throws Error(bad_input) naming config.json for another architecture (listing every supported
// one), a missing hyper-parameter or an option the forward pass does not implement; naming the
// checkpoint for a missing or misshapen tensor; Error(io) when a file cannot be read.
TransformerWeights read_hf_transformer_folder(const std::string& folder, const LoadLimits& limits = {});

}  // namespace attn_viz
