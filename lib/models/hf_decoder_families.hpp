// The decoder families read_hf_llama_folder takes, as a table: what each family's modeling code
// in transformers (modeling_<model_type>.py and its config class) does differently from Llama.
// Adding a family is a row here plus what the enums cannot say yet (docs/formats.md lists the keys).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hf_config.hpp"
#include "model_weights.hpp"

namespace attn_viz {

// Which layers have a sliding window.
enum class WindowRule {
    none,         // Llama
    every_layer,  // Mistral, Phi-3
    from_layer,   // Qwen2/3: with use_sliding_window, layers from max_window_layers on
    alternating,  // Gemma 2: even layers (0, 2, ...)
    pattern,      // Gemma 3: all but every sliding_window_pattern-th layer (5, 11, ... for 6)
};

// Which attention biases a family has.
enum class BiasRule {
    none,       // Mistral, Phi-3
    qkv,        // Qwen2: q/k/v, none on o_proj
    by_config,  // Llama, Qwen3, Gemma: q/k/v/o as attention_bias says (default false)
};

struct DecoderFamily {
    std::string model_type;
    BiasRule attention_biases = BiasRule::none;
    bool mlp_bias_key = false;  // Llama: gate/up/down biases as mlp_bias says
    WindowRule windows = WindowRule::none;
    int64_t default_window = 0;    // sliding_window when config.json has no such key (0: none)
    int64_t default_head_dim = 0;  // head_dim when config.json has none (0: hidden_size / heads)
    double default_rope_base = 10000.0;
    double default_epsilon = 1e-6;
    bool default_tied = false;    // tie_word_embeddings when absent
    bool qk_norm = false;         // Qwen3, Gemma 3: q_norm / k_norm [head_dim] before RoPE
    bool gemma = false;           // (1 + w) norms, sandwich norms, sqrt(D) embeddings, GeGLU, score scale, soft-caps
    bool fused = false;           // Phi-3: qkv_proj and gate_up_proj, split at read time
    bool partial_rotary = false;  // Phi-3: partial_rotary_factor turns the first part of each head
    double default_attn_softcap = 0.0, default_final_softcap = 0.0;  // Gemma 2: 50 and 30
    // Applies attn_logit_softcapping (Gemma 2). transformers' Gemma 3 keeps the key in its config but
    // never passes it to the attention (modeling_gemma3, every version): read and ignored there too.
    bool attn_softcap = false;
    // Reads layer_types (Qwen2/3, Gemma 2/3); transformers' Mistral and Phi-3 ignore the key
    // (every layer slides), so there it changes nothing.
    bool reads_layer_types = false;
    std::vector<std::string> implemented_keys = {};  // of HfConfig::unimplemented's keys
};

// Every family, in the order docs list them.
const std::vector<DecoderFamily>& decoder_families();

// The row of config.json's model_type, or Error(bad_input) naming config.json and listing them.
const DecoderFamily& decoder_family(const HfConfig& hf);

// The keys each query of block `layer` (of `layers`) sees (0: every earlier key): the family's
// rule, or layer_types where config.json gives them and the family reads them; sliding_window (null: none; absent: the
// family's default).
int64_t sliding_window_of(const HfConfig& hf, const DecoderFamily& family, int64_t layer, int64_t layers);

}  // namespace attn_viz
